#include "runtime/plan/config/config_toml.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

namespace bs::runtime {
namespace {

RunConfig unusualConfig()
{
    RunConfig c;
    c.model.preset = "";
    c.model.shape = GptShape{.layers = 6,
        .dModel = 96,
        .heads = 6,
        .seqLen = 48,
        .vocab = 1000,
        .tiedHead = true,
        .dropout = 0.1 + 0.2}; // 0.30000000000000004: needs all 17 digits
    c.pipeline = {.stages = 3,
        .microbatches = 12,
        .accum = 5,
        .microBatchSize = 2,
        .extraDepth = 1,
        .layersPerStage = {1, 3, 2},
        .partition = "flops",
        .partitionUnits = {},
        .memoryBudgetMiB = 0.1 + 0.7};
    c.schedule.name = "paci";
    c.optimizer.lr = 1.0 / 3.0;
    c.optimizer.beta2 = 0.999;
    c.optimizer.eps = 1e-12;
    c.optimizer.minLr = 0.0;
    c.optimizer.decay = "constant";
    c.optimizer.totalSteps = 77;
    c.data.spec = "text:/tmp/a dir/\"quoted\" \\ back\tslash é.txt";
    c.data.valFraction = 0.125;
    c.data.seed = std::numeric_limits<std::int64_t>::max();
    c.training.steps = 3;
    c.training.seed = 0;
    c.training.targetLoss = 2.5e-7;
    c.device.name = "cuda:1";
    c.model.dtype = "bf16";
    c.device.intraOpThreads = 2;
    c.profiling.trace = false;
    c.profiling.cupti = false;
    return c;
}

TEST(ConfigToml, CuptiSwitchIsAProfilingKey)
{
    // tests/gpu/run.sh measures CUPTI's overhead with this key: it must parse, not be refused.
    Result<RunConfig> c = parseRunConfig("[profiling]\ncupti = false\n");
    ASSERT_TRUE(c) << c.error().describe();
    EXPECT_FALSE(c->profiling.cupti);
    EXPECT_TRUE(c->profiling.trace);
    EXPECT_TRUE(RunConfig{}.profiling.cupti);
}

TEST(ConfigToml, DefaultRoundTripsExactly)
{
    const RunConfig c;
    Result<RunConfig> back = parseRunConfig(toToml(c));
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_EQ(*back, c);
}

TEST(ConfigToml, UnusualValuesRoundTripExactly)
{
    const RunConfig c = unusualConfig();
    const std::string text = toToml(c);
    Result<RunConfig> back = parseRunConfig(text);
    ASSERT_TRUE(back) << back.error().describe() << "\n" << text;
    EXPECT_EQ(*back, c) << text;
    EXPECT_EQ(toToml(*back), text); // writing is deterministic
}

TEST(ConfigToml, ChangingAnyFieldBreaksEquality)
{
    const RunConfig base = unusualConfig();
    RunConfig c = base;
    c.model.shape.dropout = 0.3;
    EXPECT_NE(c, base);
    c = base;
    c.training.targetLoss.reset();
    EXPECT_NE(c, base);
    c = base;
    c.pipeline.layersPerStage = {1, 2, 3};
    EXPECT_NE(c, base);
}

TEST(ConfigToml, PartitionIsANameOrUnitCounts)
{
    RunConfig c;
    c.pipeline.partition = "explicit";
    c.pipeline.partitionUnits = {1, 1, 1, 1, 1, 1, 1, 4};
    c.pipeline.memoryBudgetMiB = 512.5;
    Result<RunConfig> back = parseRunConfig(toToml(c));
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_EQ(*back, c);
    EXPECT_NE(toToml(c).find("partition = [1, 1, 1, 1, 1, 1, 1, 4]"), std::string::npos) << toToml(c);
    back = parseRunConfig("[pipeline]\npartition = \"measured\"\n");
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_EQ(back->pipeline.partition, "measured");
    EXPECT_TRUE(back->pipeline.partitionUnits.empty());
    back = parseRunConfig("[pipeline]\npartition = 3\n");
    ASSERT_FALSE(back);
    EXPECT_EQ(back.error().message, "pipeline.partition must be a string or an array of integers, got integer");
    back = parseRunConfig("[pipeline]\npartition = [1, \"x\"]\n");
    ASSERT_FALSE(back);
    EXPECT_EQ(back.error().message, "pipeline.partition must be an array of 32-bit integers, got string");
}

TEST(ConfigToml, EmptyTextGivesDefaults)
{
    Result<RunConfig> c = parseRunConfig("");
    ASSERT_TRUE(c);
    EXPECT_EQ(*c, RunConfig{});
}

TEST(ConfigToml, PresetLoadsShapeAndKeysOverrideIt)
{
    Result<RunConfig> c = parseRunConfig("[model]\npreset = \"gpt2-medium\"\nlayers = 12\n");
    ASSERT_TRUE(c) << c.error().describe();
    EXPECT_EQ(c->model.preset, "gpt2-medium");
    EXPECT_EQ(c->model.shape.layers, 12);
    EXPECT_EQ(c->model.shape.dModel, 1024);
    EXPECT_EQ(c->model.shape.seqLen, 1024);
    EXPECT_EQ(c->model.shape.vocab, 50257);
}

TEST(ConfigToml, IntegerAcceptedForFloatField)
{
    Result<RunConfig> c = parseRunConfig("[optimizer]\nlr = 1\n");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->optimizer.lr, 1.0);
}

struct BadToml
{
    const char* label;
    const char* text;
    ErrorCode code;
    const char* message;
    const char* context;
};

void PrintTo(const BadToml& v, std::ostream* os)
{
    *os << v.label;
}

class BadTomlTest : public ::testing::TestWithParam<BadToml>
{};

TEST_P(BadTomlTest, IsRejectedWithKeyTableAndPosition)
{
    Result<RunConfig> c = parseRunConfig(GetParam().text, "run.toml");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, GetParam().code);
    EXPECT_EQ(c.error().message, GetParam().message);
    EXPECT_EQ(c.error().context, GetParam().context);
}

// clang-format off
const BadToml kBadToml[] = {
    {"unknownKey", "[pipeline]\nstages = 4\nmicrobatch = 8\n", ErrorCode::ParseError,
     "unknown key 'microbatch' in table [pipeline]; allowed keys: stages, microbatches, accum, micro_batch_size, "
     "extra_depth, stages_per_rank, placement, layers_per_stage, partition, memory_budget_mib", "run.toml:3:1"},
    {"unknownModelKey", "[model]\nlayer = 4\n", ErrorCode::ParseError,
     "unknown key 'layer' in table [model]; allowed keys: preset, layers, d_model, heads, seq_len, vocab, dropout, "
     "tied_head, dtype, recompute", "run.toml:2:1"},
    {"unknownTrainingKey", "[training]\nstep = 4\n", ErrorCode::ParseError,
     "unknown key 'step' in table [training]; allowed keys: steps, seed, eval_interval, eval_batches, target_loss, checkpoint_every",
     "run.toml:2:1"},
    {"unknownTable", "[modle]\nlayers = 4\n", ErrorCode::ParseError,
     "unknown table or key 'modle' at top level; allowed tables: model, pipeline, schedule, optimizer, data, "
     "training, device, profiling", "run.toml:1:2"},
    {"topLevelKey", "steps = 4\n", ErrorCode::ParseError,
     "unknown table or key 'steps' at top level; allowed tables: model, pipeline, schedule, optimizer, data, "
     "training, device, profiling", "run.toml:1:1"},
    {"notATable", "schedule = \"paci\"\n", ErrorCode::ParseError,
     "[schedule] must be a table, got string", "run.toml:1:12"},
    {"wrongType", "[pipeline]\nstages = \"8\"\n", ErrorCode::ParseError,
     "pipeline.stages must be an integer, got string", "run.toml:2:10"},
    {"floatForInt", "[training]\nsteps = 1.5\n", ErrorCode::ParseError,
     "training.steps must be an integer, got floating-point", "run.toml:2:9"},
    {"boolType", "[profiling]\ntrace = 1\n", ErrorCode::ParseError,
     "profiling.trace must be true or false, got integer", "run.toml:2:9"},
    {"listType", "[pipeline]\nlayers_per_stage = [1, \"2\"]\n", ErrorCode::ParseError,
     "pipeline.layers_per_stage must be an array of 32-bit integers, got string", "run.toml:2:20"},
    {"tooBig", "[pipeline]\nstages = 3000000000\n", ErrorCode::ParseError,
     "pipeline.stages = 3000000000 does not fit in a 32-bit integer", "run.toml:2:10"},
    {"syntax", "[pipeline\nstages = 4\n", ErrorCode::ParseError,
     "TOML syntax error: Error while parsing table header: expected ']', saw '\\n'", "run.toml:1:10"},
    {"badPreset", "[model]\npreset = \"huge\"\n", ErrorCode::InvalidArgument,
     "model.preset: unknown model preset 'huge' (allowed: tiny, small, deep, gpt2-medium, or \"\" for an explicit shape)",
     "run.toml"},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Config, BadTomlTest, ::testing::ValuesIn(kBadToml),
    [](const ::testing::TestParamInfo<BadToml>& p) { return std::string(p.param.label); });

TEST(ConfigToml, LoadMissingFileIsIoError)
{
    Result<RunConfig> c = loadRunConfig("/nonexistent/dir/run.toml");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ErrorCode::IoError);
    EXPECT_NE(c.error().message.find("/nonexistent/dir/run.toml"), std::string::npos);
}

TEST(ConfigToml, LoadFileReportsFileNameInContext)
{
    const auto path = std::filesystem::temp_directory_path() / "bs_config_test_bad.toml";
    {
        std::ofstream out(path);
        out << "[data]\nspec = \"synthetic\"\nsead = 3\n";
    }
    Result<RunConfig> c = loadRunConfig(path);
    std::filesystem::remove(path);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().context, path.string() + ":3:1");
}

} // namespace
} // namespace bs::runtime

namespace bs::runtime {
namespace {

/// Random configs (not necessarily valid: round-trip is a property of the format, not of
/// validation) with doubles drawn across many magnitudes.
RunConfig randomConfig(std::mt19937_64& rng)
{
    auto anyInt = [&] { return static_cast<int>(rng()); };
    auto anyDouble = [&] {
        std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
        std::uniform_int_distribution<int> exponent(-300, 300);
        return std::ldexp(mantissa(rng), exponent(rng));
    };
    auto anyString = [&] {
        std::string s;
        const auto n = rng() % 12;
        for (std::uint64_t i = 0; i < n; ++i) {
            s += static_cast<char>(1 + rng() % 127); // every ASCII char but NUL, controls and DEL included
        }
        if (rng() % 4 == 0) {
            s += "é→𝄞"; // 2-, 3- and 4-byte UTF-8
        }
        return s;
    };
    RunConfig c;
    c.model.preset = rng() % 2 ? "" : gptPresetNames()[rng() % 3];
    c.model.shape = {anyInt(), anyInt(), anyInt(), anyInt(), anyInt(), rng() % 2 == 0, anyDouble()};
    c.pipeline = {
        anyInt(), anyInt(), anyInt(), anyInt(), anyInt(), anyInt(), anyString(), {}, "flops", {}, anyDouble()};
    for (std::uint64_t i = rng() % 5; i > 0; --i) {
        c.pipeline.layersPerStage.push_back(anyInt());
    }
    c.schedule.name = anyString();
    c.optimizer = {
        anyDouble(), anyDouble(), anyDouble(), anyDouble(), anyDouble(), anyInt(), anyInt(), anyDouble(), anyString()};
    c.data = {anyString(), anyDouble(), static_cast<std::int64_t>(rng())};
    c.training = {anyInt(), static_cast<std::int64_t>(rng()), anyInt(), anyInt(), std::nullopt};
    if (rng() % 2) {
        c.training.targetLoss = anyDouble();
    }
    c.device = {anyString(), anyInt()};
    c.profiling.trace = rng() % 2 == 0;
    return c;
}

TEST(ConfigToml, RandomConfigsRoundTripExactly)
{
    std::mt19937_64 rng(20240520);
    for (int i = 0; i < 300; ++i) {
        const RunConfig c = randomConfig(rng);
        const std::string text = toToml(c);
        Result<RunConfig> back = parseRunConfig(text);
        ASSERT_TRUE(back) << back.error().describe() << "\n" << text;
        ASSERT_EQ(*back, c) << text;
    }
}

} // namespace
} // namespace bs::runtime
