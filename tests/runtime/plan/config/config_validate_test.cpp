#include "runtime/plan/config/config_validate.h"

#include "runtime/plan/schedule/catalogue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

namespace bs::runtime {
namespace {

struct BadValue
{
    const char* label;
    std::function<void(RunConfig&)> mutate;
    const char* field; ///< expected Error::context
    const char* message; ///< expected substring of the message
};

void PrintTo(const BadValue& v, std::ostream* os)
{
    *os << v.label;
}

class BadValueTest : public ::testing::TestWithParam<BadValue>
{};

TEST(ConfigSchedules, NamesAreTheCatalogues)
{
    std::vector<std::string> catalogue;
    for (const auto& info : scheduleCatalogue()) {
        catalogue.push_back(info.name);
        EXPECT_EQ(isAsynchronousSchedule(info.name), info.asynchronous) << info.name;
    }
    EXPECT_EQ(configScheduleNames(), catalogue);
}

TEST_P(BadValueTest, GivesMessageNamingFieldValueAndRange)
{
    RunConfig config;
    ASSERT_TRUE(validate(config)) << validate(config).error().describe();
    GetParam().mutate(config);
    const std::vector<Error> errors = validateAll(config);
    std::string all;
    for (const Error& e : errors) {
        all += e.describe() + "\n";
    }
    ASSERT_EQ(errors.size(), 1u) << all;
    EXPECT_EQ(errors[0].code, ErrorCode::InvalidArgument);
    EXPECT_EQ(errors[0].context, GetParam().field);
    EXPECT_EQ(errors[0].message, GetParam().message);
    const Status status = validate(config);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().message, errors[0].message);
}

const double kNan = std::numeric_limits<double>::quiet_NaN();

// clang-format off
const BadValue kBadValues[] = {
    {"paciAccumNotDivisor", [](RunConfig& c) { c.schedule.name = "paci"; c.pipeline.accum = 3; c.pipeline.microbatches = 8; },
     "pipeline.accum", "pipeline.accum = 3 must divide pipeline.microbatches = 8 so every update applies whole windows"},
    {"paciAccumAboveM", [](RunConfig& c) { c.schedule.name = "paci"; c.pipeline.accum = 16; },
     "pipeline.accum", "pipeline.accum = 16 must divide pipeline.microbatches = 8 so every update applies whole windows"},
    {"preset", [](RunConfig& c) { c.model.preset = "huge"; }, "model.preset",
     "model.preset = \"huge\" is not allowed; allowed values: tiny, small, deep, gpt2-medium"},
    {"layers0", [](RunConfig& c) { c.model.shape.layers = 0; c.pipeline.stages = 1; }, "model.layers",
     "model.layers = 0 is out of range; allowed: 1..1024"},
    {"dModel", [](RunConfig& c) { c.model.shape.dModel = 100000; }, "model.d_model",
     "model.d_model = 100000 is out of range; allowed: 1..65536"},
    {"headsDivide", [](RunConfig& c) { c.model.shape.heads = 3; }, "model.heads",
     "model.heads = 3 must divide model.d_model = 128"},
    {"seqLen", [](RunConfig& c) { c.model.shape.seqLen = -5; }, "model.seq_len",
     "model.seq_len = -5 is out of range; allowed: 1..65536"},
    {"vocab", [](RunConfig& c) { c.model.shape.vocab = 1; }, "model.vocab",
     "model.vocab = 1 is out of range; allowed: 2..16777216"},
    {"dropout", [](RunConfig& c) { c.model.shape.dropout = 1.0; }, "model.dropout",
     "model.dropout = 1 is out of range; allowed: [0, 1)"},
    {"dropoutNan", [](RunConfig& c) { c.model.shape.dropout = kNan; }, "model.dropout",
     "model.dropout = nan is out of range; allowed: [0, 1)"},
    {"schedule", [](RunConfig& c) { c.schedule.name = "1F1B"; }, "schedule.name",
     "schedule.name = \"1F1B\" is not allowed; allowed values: gpipe, 1f1b, zb-h1, zb-h2, pipedream, 2bw, "
     "async-1f1b, paci, interleaved-1f1b, looped-bfs, interleaved-zb, zb-v, dualpipev, paci-interleaved"},
    {"stagesPerRankOneStageSchedule", [](RunConfig& c) { c.pipeline.stagesPerRank = 2; }, "pipeline.stages_per_rank",
     "pipeline.stages_per_rank = 2 does not fit 1f1b; allowed: 0 or 1"},
    {"stagesPerRankOverLimit", [](RunConfig& c) { c.schedule.name = "interleaved-1f1b"; c.pipeline.stagesPerRank = 17; },
     "pipeline.stages_per_rank", "pipeline.stages_per_rank = 17 is out of range; allowed: 0..16"},
    {"zbvTakesTwoStagesPerRank", [](RunConfig& c) { c.schedule.name = "zb-v"; c.pipeline.stagesPerRank = 3; },
     "pipeline.stages_per_rank", "pipeline.stages_per_rank = 3 does not fit zb-v; allowed: 0 or 2"},
    {"placementUnknown", [](RunConfig& c) { c.pipeline.placement = "ring"; }, "pipeline.placement",
     "pipeline.placement = \"ring\" is not allowed; allowed values: one-per-rank, loop, v"},
    {"placementOfAnotherSchedule", [](RunConfig& c) { c.schedule.name = "zb-v"; c.pipeline.stages = 4; c.pipeline.placement = "loop"; },
     "pipeline.placement", "pipeline.placement = \"loop\" does not fit zb-v; allowed for zb-v: \"v\" or \"\""},
    {"interleavedNeedsMultipleOfStages", [](RunConfig& c) { c.schedule.name = "interleaved-1f1b"; c.pipeline.stages = 4; c.pipeline.microbatches = 10; },
     "pipeline.microbatches", "pipeline.microbatches = 10 for interleaved-1f1b must be a multiple of pipeline.stages = 4"},
    {"dualPipeVNeedsTwiceTheStages", [](RunConfig& c) { c.schedule.name = "dualpipev"; c.pipeline.stages = 4; c.pipeline.microbatches = 6; },
     "pipeline.microbatches", "pipeline.microbatches = 6 is too few for dualpipev; allowed: >= 2 x pipeline.stages = 8"},
    {"chunksNeedABlockEach", [](RunConfig& c) { c.schedule.name = "zb-v"; },
     "pipeline.stages_per_rank", "pipeline.stages x pipeline.stages_per_rank = 16 model chunks for zb-v exceed model.layers = 8; allowed: at most 8 chunks (each needs a block)"},
    {"stages0", [](RunConfig& c) { c.pipeline.stages = 0; }, "pipeline.stages",
     "pipeline.stages = 0 is out of range; allowed: 1..256"},
    {"stagesOverLayers", [](RunConfig& c) { c.pipeline.stages = 9; }, "pipeline.stages",
     "pipeline.stages = 9 exceeds model.layers = 8; allowed: 1..8 (each stage needs a block; list "
     "pipeline.layers_per_stage to leave the first or last stage with embeddings or head only)"},
    {"microbatches", [](RunConfig& c) { c.pipeline.microbatches = 0; }, "pipeline.microbatches",
     "pipeline.microbatches = 0 is out of range; allowed: 1..65536"},
    {"accumNegative", [](RunConfig& c) { c.schedule.name = "paci"; c.pipeline.accum = -1; }, "pipeline.accum",
     "pipeline.accum = -1 is out of range; allowed: 0..65536"},
    {"accumNonPaci", [](RunConfig& c) { c.pipeline.accum = 4; }, "pipeline.accum",
     "pipeline.accum = 4 is only used by paci, paci-interleaved; allowed for 1f1b: 0 or pipeline.microbatches = 8"},
    {"stagesOverLimit", [](RunConfig& c) { c.pipeline.stages = 257; }, "pipeline.stages",
     "pipeline.stages = 257 is out of range; allowed: 1..256"},
    {"twoBwTooFewMicrobatches", [](RunConfig& c) { c.schedule.name = "2bw"; c.pipeline.microbatches = 2; },
     "pipeline.microbatches", "pipeline.microbatches = 2 is too few for 2bw: two weight versions need every backward "
     "before the second update after its forward; allowed: >= pipeline.stages + pipeline.extra_depth - 1 = 7"},
    {"microBatchSize", [](RunConfig& c) { c.pipeline.microBatchSize = 0; }, "pipeline.micro_batch_size",
     "pipeline.micro_batch_size = 0 is out of range; allowed: 1..65536"},
    {"extraDepthSync", [](RunConfig& c) { c.schedule.name = "gpipe"; c.pipeline.extraDepth = 2; },
     "pipeline.extra_depth", "pipeline.extra_depth = 2 is only used by asynchronous schedules (pipedream, 2bw, "
     "async-1f1b, paci); allowed for gpipe: 0"},
    {"extraDepthNegative", [](RunConfig& c) { c.schedule.name = "paci"; c.pipeline.extraDepth = -1; },
     "pipeline.extra_depth", "pipeline.extra_depth = -1 is out of range; allowed: 0..256"},
    {"layerListSize", [](RunConfig& c) { c.pipeline.layersPerStage = {4, 4}; }, "pipeline.layers_per_stage",
     "pipeline.layers_per_stage has 2 entries; allowed: exactly pipeline.stages = 8"},
    {"layerListSum", [](RunConfig& c) { c.pipeline.layersPerStage = {1, 1, 1, 1, 1, 1, 1, 2}; },
     "pipeline.layers_per_stage", "pipeline.layers_per_stage sums to 9; allowed: a sum equal to model.layers = 8"},
    {"layerListZeroInside", [](RunConfig& c) { c.pipeline.layersPerStage = {1, 0, 1, 1, 1, 1, 1, 2}; },
     "pipeline.layers_per_stage",
     "pipeline.layers_per_stage[1] = 0; allowed: >= 1 (0 only on the first and last stage)"},
    {"partitionName", [](RunConfig& c) { c.pipeline.partition = "fast"; }, "pipeline.partition",
     "pipeline.partition = \"fast\" is not allowed; allowed values: \"flops\", \"measured\" or an array of layer units per stage"},
    {"partitionUnitSum", [](RunConfig& c) { c.pipeline.partition = "explicit"; c.pipeline.partitionUnits = {1, 1, 1, 1, 1, 1, 1, 1}; },
     "pipeline.partition", "pipeline.partition sums to 8; allowed: a sum equal to the layer units, model.layers + 3 = 11"},
    {"partitionUnitZero", [](RunConfig& c) { c.pipeline.partition = "explicit"; c.pipeline.partitionUnits = {0, 2, 1, 1, 1, 1, 1, 4}; },
     "pipeline.partition", "pipeline.partition[0] = 0; allowed: >= 1 (layer units: embedding, each block, final norm, head)"},
    {"partitionUnitCount", [](RunConfig& c) { c.pipeline.partition = "explicit"; c.pipeline.partitionUnits = {5, 6}; },
     "pipeline.partition", "pipeline.partition has 2 entries; allowed: one per stage (pipeline.stages = 8)"},
    {"partitionAndLayerList", [](RunConfig& c) { c.pipeline.partition = "measured"; c.pipeline.layersPerStage = {1, 1, 1, 1, 1, 1, 1, 1}; },
     "pipeline.partition", "pipeline.partition = \"measured\" and pipeline.layers_per_stage are both set; allowed: one of them"},
    {"measuredTooManyStages", [](RunConfig& c) { c.pipeline.partition = "measured"; c.pipeline.stages = 12; },
     "pipeline.stages", "pipeline.stages = 12 exceeds the layer units, model.layers + 3 = 11; allowed: 1..11"},
    {"memoryBudget", [](RunConfig& c) { c.pipeline.memoryBudgetMiB = -1; }, "pipeline.memory_budget_mib",
     "pipeline.memory_budget_mib = -1 is out of range; allowed: [0, 1e+09]"},
    {"lrZero", [](RunConfig& c) { c.optimizer.lr = 0.0; }, "optimizer.lr",
     "optimizer.lr = 0 is out of range; allowed: (0, 10]"},
    {"lrInf", [](RunConfig& c) { c.optimizer.lr = std::numeric_limits<double>::infinity(); },
     "optimizer.lr", "optimizer.lr = inf is out of range; allowed: (0, 10]"},
    {"beta1", [](RunConfig& c) { c.optimizer.beta1 = 1.0; }, "optimizer.beta1",
     "optimizer.beta1 = 1 is out of range; allowed: [0, 1)"},
    {"beta2", [](RunConfig& c) { c.optimizer.beta2 = -0.5; }, "optimizer.beta2",
     "optimizer.beta2 = -0.5 is out of range; allowed: [0, 1)"},
    {"eps", [](RunConfig& c) { c.optimizer.eps = 0.0; }, "optimizer.eps",
     "optimizer.eps = 0 is out of range; allowed: (0, 1]"},
    {"weightDecay", [](RunConfig& c) { c.optimizer.weightDecay = -0.1; }, "optimizer.weight_decay",
     "optimizer.weight_decay = -0.1 is out of range; allowed: [0, 10]"},
    {"warmup", [](RunConfig& c) { c.optimizer.warmupSteps = -1; }, "optimizer.warmup_steps",
     "optimizer.warmup_steps = -1 is out of range; allowed: 0..1000000000"},
    {"totalSteps", [](RunConfig& c) { c.optimizer.totalSteps = -3; }, "optimizer.total_steps",
     "optimizer.total_steps = -3 is out of range; allowed: 0..1000000000"},
    {"minLrAboveLr", [](RunConfig& c) { c.optimizer.minLr = 1e-3; }, "optimizer.min_lr",
     "optimizer.min_lr = 0.001 is out of range; allowed: [0, 0.0003]"},
    {"decay", [](RunConfig& c) { c.optimizer.decay = "linear"; }, "optimizer.decay",
     "optimizer.decay = \"linear\" is not allowed; allowed values: cosine, constant"},
    {"dataSpec", [](RunConfig& c) { c.data.spec = "csv:x"; }, "data.spec",
     "data.spec = \"csv:x\" is not allowed; allowed: \"synthetic\", \"text:PATH\" or \"bin:PATH\""},
    {"dataSpecEmptyPath", [](RunConfig& c) { c.data.spec = "bin:"; }, "data.spec",
     "data.spec = \"bin:\" has an empty path; allowed: \"text:PATH\" or \"bin:PATH\""},
    {"valFraction", [](RunConfig& c) { c.data.valFraction = 1.0; }, "data.val_fraction",
     "data.val_fraction = 1 is out of range; allowed: [0, 1)"},
    {"valFractionZeroWithEval", [](RunConfig& c) { c.data.spec = "bin:x.bin"; c.data.valFraction = 0; },
     "data.val_fraction", "data.val_fraction = 0 leaves no validation tokens but training.eval_interval = 10; "
     "allowed: (0, 1), or training.eval_interval = 0"},
    {"dataSeed", [](RunConfig& c) { c.data.seed = -1; }, "data.seed",
     "data.seed = -1 is out of range; allowed: 0..9223372036854775807"},
    {"textVocab", [](RunConfig& c) { c.data.spec = "text:a.txt"; c.model.shape.vocab = 100; }, "model.vocab",
     "model.vocab = 100 is too small for byte-level text data; allowed: >= 256"},
    {"steps", [](RunConfig& c) { c.training.steps = 0; }, "training.steps",
     "training.steps = 0 is out of range; allowed: 1..1000000000"},
    {"evalInterval", [](RunConfig& c) { c.training.evalInterval = -1; }, "training.eval_interval",
     "training.eval_interval = -1 is out of range; allowed: 0..1000000000"},
    {"evalBatches", [](RunConfig& c) { c.training.evalBatches = 0; }, "training.eval_batches",
     "training.eval_batches = 0 is out of range; allowed: 1..65536"},
    {"targetLoss", [](RunConfig& c) { c.training.targetLoss = -2.0; }, "training.target_loss",
     "training.target_loss = -2 is out of range; allowed: (0, 1e+06]"},
    {"device", [](RunConfig& c) { c.device.name = "gpu"; }, "device.name",
     "device.name = \"gpu\" is not allowed; allowed: \"cpu\", \"cuda\" or \"cuda:N\" (N in 0..1023)"},
    {"deviceIndex", [](RunConfig& c) { c.device.name = "cuda:x"; }, "device.name",
     "device.name = \"cuda:x\" is not allowed; allowed: \"cpu\", \"cuda\" or \"cuda:N\" (N in 0..1023)"},
    {"deviceUpperCase", [](RunConfig& c) { c.device.name = "CUDA"; }, "device.name",
     "device.name = \"CUDA\" is not allowed; allowed: \"cpu\", \"cuda\" or \"cuda:N\" (N in 0..1023)"},
    {"deviceNegativeIndex", [](RunConfig& c) { c.device.name = "cuda:-1"; }, "device.name",
     "device.name = \"cuda:-1\" is not allowed; allowed: \"cpu\", \"cuda\" or \"cuda:N\" (N in 0..1023)"},
    {"dtype", [](RunConfig& c) { c.model.dtype = "fp16"; }, "model.dtype",
     "model.dtype = \"fp16\" is not allowed; allowed: \"fp32\", \"bf16\" (or leave it out: bf16 on CUDA, fp32 on the CPU)"},
    {"threads", [](RunConfig& c) { c.device.intraOpThreads = 5000; }, "device.intra_op_threads",
     "device.intra_op_threads = 5000 is out of range; allowed: 0..1024"},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Config, BadValueTest, ::testing::ValuesIn(kBadValues),
    [](const ::testing::TestParamInfo<BadValue>& p) { return std::string(p.param.label); });

struct GoodValue
{
    const char* label;
    std::function<void(RunConfig&)> mutate;
};

void PrintTo(const GoodValue& v, std::ostream* os)
{
    *os << v.label;
}

class GoodValueTest : public ::testing::TestWithParam<GoodValue>
{};

TEST_P(GoodValueTest, IsAccepted)
{
    RunConfig config;
    GetParam().mutate(config);
    const Status status = validate(config);
    EXPECT_TRUE(status) << status.error().describe();
}

// clang-format off
const GoodValue kGoodValues[] = {
    {"paciAccumDividesM", [](RunConfig& c) { c.schedule.name = "paci"; c.pipeline.accum = 4; c.pipeline.microbatches = 8; }},
    {"paciAccumZeroIsM", [](RunConfig& c) { c.schedule.name = "paci"; c.pipeline.accum = 0; }},
    {"syncAccumEqualsM", [](RunConfig& c) { c.schedule.name = "gpipe"; c.pipeline.accum = 8; }},
    {"asyncExtraDepth", [](RunConfig& c) { c.schedule.name = "pipedream"; c.pipeline.extraDepth = 2; }},
    {"explicitEdgeZero", [](RunConfig& c) { c.pipeline.stages = 10; c.pipeline.layersPerStage = {0, 1, 1, 1, 1, 1, 1, 1, 1, 0}; }},
    {"partitionUnits", [](RunConfig& c) { c.pipeline.partition = "explicit"; c.pipeline.partitionUnits = {1, 1, 1, 1, 1, 1, 1, 4}; }},
    {"partitionMeasuredMoreStagesThanBlocks", [](RunConfig& c) { c.pipeline.partition = "measured"; c.pipeline.stages = 11; c.pipeline.memoryBudgetMiB = 64; }},
    {"cudaIndex", [](RunConfig& c) { c.device.name = "cuda:3"; }},
    {"cuda", [](RunConfig& c) { c.device.name = "cuda"; }},
    {"bf16", [](RunConfig& c) { c.model.dtype = "bf16"; }},
    {"fp32OnCuda", [](RunConfig& c) { c.model.dtype = "fp32"; c.device.name = "cuda:0"; }},
    {"binData", [](RunConfig& c) { c.data.spec = "bin:/data/train.bin"; }},
    {"textData", [](RunConfig& c) { c.data.spec = "text:corpus.txt"; c.data.valFraction = 0.05; }},
    {"explicitShape", [](RunConfig& c) { c.model.preset = ""; c.model.shape.heads = 8; }},
    {"everySchedule", [](RunConfig& c) { c.pipeline.stages = 4; c.pipeline.microbatches = 16; for (const auto& n : configScheduleNames()) { c.schedule.name = n; ASSERT_TRUE(validate(c)) << n; } }},
    {"interleavedWithItsPlacement", [](RunConfig& c) { c.schedule.name = "interleaved-1f1b"; c.pipeline.stages = 2; c.pipeline.stagesPerRank = 4; c.pipeline.placement = "loop"; }},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Config, GoodValueTest, ::testing::ValuesIn(kGoodValues),
    [](const ::testing::TestParamInfo<GoodValue>& p) { return std::string(p.param.label); });

TEST(ConfigValidate, ReportsEveryProblemInSectionOrder)
{
    RunConfig config;
    config.model.shape.heads = 5;
    config.pipeline.microbatches = 0;
    config.device.name = "tpu";
    const std::vector<Error> errors = validateAll(config);
    ASSERT_EQ(errors.size(), 3u);
    EXPECT_EQ(errors[0].context, "model.heads");
    EXPECT_EQ(errors[1].context, "pipeline.microbatches");
    EXPECT_EQ(errors[2].context, "device.name");
}

TEST(ConfigValidate, ToScheduleParamsCopiesPipelineFields)
{
    RunConfig config;
    config.schedule.name = "paci";
    config.pipeline.stages = 4;
    config.pipeline.microbatches = 6;
    config.pipeline.accum = 3;
    config.pipeline.extraDepth = 1;
    config.training.steps = 17;
    const ScheduleParams p = toScheduleParams(config);
    EXPECT_EQ(p.name, "paci");
    EXPECT_EQ(p.stages, 4);
    EXPECT_EQ(p.microbatches, 6);
    EXPECT_EQ(p.accum, 3);
    EXPECT_EQ(p.extraDepth, 1);
    EXPECT_EQ(p.batches, 17);
    EXPECT_EQ(runtime::shownWindowOf(config), 3);
    config.pipeline.accum = 0;
    EXPECT_EQ(runtime::shownWindowOf(config), 6);
}

} // namespace
} // namespace bs::runtime

namespace bs::runtime {
namespace {

TEST(DeviceDefaults, Bf16OnCudaFp32OnTheCpuUnlessSet)
{
    RunConfig c;
    EXPECT_EQ(effectiveDtype(c), "fp32");
    c.device.name = "cuda";
    EXPECT_EQ(effectiveDtype(c), "bf16");
    c.device.name = "cuda:2";
    EXPECT_EQ(effectiveDtype(c), "bf16");
    c.model.dtype = "fp32";
    EXPECT_EQ(effectiveDtype(c), "fp32");
    c.device.name = "cpu";
    c.model.dtype = "bf16";
    EXPECT_EQ(effectiveDtype(c), "bf16");
}

TEST(DeviceDefaults, DeviceNamesParse)
{
    EXPECT_EQ(parseDeviceName("cpu"), (DeviceSpec{false, -1}));
    EXPECT_EQ(parseDeviceName("cuda"), (DeviceSpec{true, -1}));
    EXPECT_EQ(parseDeviceName("cuda:0"), (DeviceSpec{true, 0}));
    EXPECT_EQ(parseDeviceName("cuda:17"), (DeviceSpec{true, 17}));
    EXPECT_EQ(parseDeviceName("cudax"), (DeviceSpec{false, -1}));
    EXPECT_EQ(parseDeviceName("cuda:1a"), (DeviceSpec{false, -1}));
}

} // namespace
} // namespace bs::runtime
