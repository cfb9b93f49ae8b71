// Pre-flight of a whole run for each way it starts (issue 14): CPU, CUDA (one GPU, several, a
// distributed rank's own GPU) with fake capacities, so the CUDA branches are tested without one.
#include "runtime/plan/sim/run_preflight.h"

#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/config/config_validate.h"
#include "runtime/plan/sim/cost_model.h"
#include "runtime/plan/sim/preflight.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

RunConfig bigRun(const std::string& device, int b = 512)
{
    RunConfig c;
    c.model.preset = "gpt2-medium";
    c.model.shape = gptPreset("gpt2-medium").value();
    c.pipeline.stages = 4;
    c.pipeline.microbatches = 4;
    c.pipeline.accum = 0;
    c.pipeline.microBatchSize = b;
    c.schedule.name = "1f1b";
    c.device.name = device;
    return c;
}

/// The simulator's figures for bigRun(…, b): per-stage peak of the heaviest stage, and the total.
/// `cuda`: as a CUDA run keeps its activations (bf16 by default there, fused attention).
MemoryEstimate estimate(int b, int sharing = 0, bool cuda = false)
{
    GptScenario s;
    s.schedule = "1f1b";
    s.stages = 4;
    s.shape = gptPreset("gpt2-medium").value();
    s.shape.activationBytes = cuda ? 2 : 4;
    s.shape.fusedAttention = cuda;
    s.device = deviceProfile("cpu").value();
    s.accum = 4;
    s.microBatchSize = b;
    s.batches = 1;
    return estimateMemory(s, sharing).value();
}

TEST(RunPreflight, CpuRunAgainstHostRam)
{
    MemoryCapacity capacity;
    capacity.hostBytes = estimate(1).totalBytes; // exactly what b = 1 needs
    const Status refused = preflightRun(bigRun("cpu"), capacity);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(refused.error().message.find("(host RAM)"), std::string::npos) << refused.error().message;
    EXPECT_NE(refused.error().message.find("nearest setting that fits"), std::string::npos);
    EXPECT_TRUE(preflightRun(bigRun("cpu", 1), capacity)) << "b = 1 fits";
    EXPECT_TRUE(preflightRun(bigRun("cpu"), MemoryCapacity{})) << "unknown RAM: no check";
    PreflightScope reference;
    reference.reference = true;
    EXPECT_TRUE(preflightRun(bigRun("cpu"), capacity, reference));
}

// One GPU holds every stage: the total against that GPU's capacity, named in the refusal.
TEST(RunPreflight, CudaRunAgainstTheGpusCapacity)
{
    const MemoryEstimate b1 = estimate(1, 0, true);
    MemoryCapacity capacity;
    capacity.hostBytes = 1; // the host's RAM does not matter for CUDA stages
    capacity.gpuBytes = {b1.totalBytes, b1.totalBytes / 2};
    EXPECT_TRUE(preflightRun(bigRun("cuda:0", 1), capacity)) << "exactly enough";
    const Status onGpu1 = preflightRun(bigRun("cuda:1", 1), capacity);
    ASSERT_FALSE(onGpu1);
    EXPECT_NE(onGpu1.error().message.find("(cuda:1 memory)"), std::string::npos) << onGpu1.error().message;
    EXPECT_TRUE(preflightRun(bigRun("cuda:7", 1), capacity)) << "no such GPU: the device plan says so";
    EXPECT_TRUE(preflightRun(bigRun("cuda", 1), MemoryCapacity{})) << "no GPU found: the device plan says so";
}

// "cuda" over two GPUs: two stages on each, against the smaller GPU.
TEST(RunPreflight, CudaBlocksOverSeveralGpusUseTheSmallest)
{
    const MemoryEstimate two = estimate(1, 2, true);
    MemoryCapacity capacity;
    capacity.gpuBytes = {100 * two.totalBytes, two.totalBytes};
    EXPECT_TRUE(preflightRun(bigRun("cuda", 1), capacity));
    capacity.gpuBytes = {100 * two.totalBytes, two.totalBytes - 1};
    const Status refused = preflightRun(bigRun("cuda", 1), capacity);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("2 stages on each"), std::string::npos) << refused.error().message;
}

// A distributed rank holds its own stage on cuda:LOCAL_RANK; CPU ranks of one host share its RAM.
TEST(RunPreflight, DistributedRanksCheckTheirOwnMemory)
{
    const MemoryEstimate one = estimate(1, 1, true);
    MemoryCapacity capacity;
    capacity.gpuBytes = {one.totalBytes, one.totalBytes - 1};
    PreflightScope rank0;
    rank0.distributed = true;
    rank0.localRank = 0;
    EXPECT_TRUE(preflightRun(bigRun("cuda", 1), capacity, rank0)) << "the heaviest stage fits on GPU 0";
    PreflightScope rank1 = rank0;
    rank1.localRank = 1;
    const Status refused = preflightRun(bigRun("cuda", 1), capacity, rank1);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("(cuda:1 memory)"), std::string::npos) << refused.error().message;

    const MemoryEstimate all = estimate(1);
    MemoryCapacity host;
    host.hostBytes = all.totalBytes - 1;
    PreflightScope cpuRank;
    cpuRank.distributed = true;
    cpuRank.ranksOnThisHost = 4;
    EXPECT_FALSE(preflightRun(bigRun("cpu", 1), host, cpuRank)) << "four ranks on one host share its RAM";
    cpuRank.ranksOnThisHost = 1; // one rank per host (multi-node)
    EXPECT_TRUE(preflightRun(bigRun("cpu", 1), host, cpuRank));
}

// An explicit partition is what the stages will hold: piling blocks onto stage 0 makes it the
// heaviest, so a rank whose GPU fits the FLOPs split's heaviest stage is refused.
TEST(RunPreflight, ExplicitPartitionIsWhatTheStagesHold)
{
    const MemoryEstimate one = estimate(1, 1, true);
    MemoryCapacity capacity;
    capacity.gpuBytes = {one.totalBytes};
    PreflightScope rank0;
    rank0.distributed = true;
    rank0.localRank = 0;
    RunConfig piled = bigRun("cuda", 1);
    EXPECT_TRUE(preflightRun(piled, capacity, rank0));
    piled.pipeline.partition = "explicit";
    piled.pipeline.partitionUnits = {15, 4, 4, 4}; // embedding + 14 blocks; 4; 4; 2 blocks + norm + head
    const Status refused = preflightRun(piled, capacity, rank0);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("(cuda:0 memory)"), std::string::npos) << refused.error().message;
}

// tests/gpu/run.sh's runs: gpt2-medium, 8 stages on one H100 (79.6 GiB), m = 8, b = 4. bf16 with
// scaled_dot_product_attention keeps about 40 bytes per token and channel in a block
// (GptShape::blockActivationBytes; the CPU measurement in layer_units_test.cpp agrees), so every
// schedule family fits; counted as fp32 with (T, T) scores (before) they asked 109-149 GiB.
TEST(RunPreflight, Gpt2Medium8StagesBf16FitsOneH100)
{
    MemoryCapacity h100;
    h100.gpuBytes = {std::int64_t{85'520'809'984}}; // 79.65 GiB, as an H100 80GB reports
    for (const char* schedule : {"1f1b", "zb-h1", "pipedream", "paci"}) {
        RunConfig c = bigRun("cuda", 4);
        c.pipeline.stages = 8;
        c.pipeline.microbatches = 8;
        c.schedule.name = schedule;
        c.model.dtype = "bf16";
        const Status fits = preflightRun(c, h100);
        EXPECT_TRUE(fits) << schedule << ": " << fits.error().describe();
        GptScenario before; // the estimate as it was: fp32, (T, T) scores kept
        before.schedule = schedule;
        before.stages = 8;
        before.shape = gptPreset("gpt2-medium").value();
        before.device = deviceProfile("cpu").value();
        before.accum = 8;
        before.microBatchSize = 4;
        before.batches = 1;
        EXPECT_GT(estimateMemory(before, 0).value().totalBytes, h100.gpuBytes[0]) << schedule;
    }
}

// Issue 30: the GUI's Train live, what-if and Suggest ask preflightStart; it refuses exactly what
// the runtime's config validator (RunSession::create) refuses, with the same field and message,
// and lets through what the validator takes.
TEST(RunPreflight, StartRefusesExactlyWhatTheValidatorRefuses)
{
    const auto tiny = [](const std::string& schedule, int stages, int microbatches) {
        RunConfig c; // the what-if's default model: the tiny GPT, 8 layers
        c.schedule.name = schedule;
        c.pipeline.stages = stages;
        c.pipeline.microbatches = microbatches;
        c.pipeline.microBatchSize = 8;
        return c;
    };
    struct Case
    {
        RunConfig config;
        bool refused;
    };
    const std::vector<Case> cases{{tiny("dualpipev", 8, 16), true}, {tiny("zb-v", 8, 8), true},
        {tiny("interleaved-1f1b", 8, 8), true}, {tiny("dualpipev", 4, 6), true}, {tiny("paci", 8, 8), false},
        {tiny("1f1b", 8, 8), false}, {tiny("interleaved-1f1b", 4, 8), false}, {tiny("dualpipev", 4, 8), false}};
    for (const Case& k : cases) {
        const RunConfig& c = k.config;
        const Status validator = validate(c);
        const Status start = preflightStart(c, MemoryCapacity{}); // unknown RAM: the validator alone decides
        const std::string what = c.schedule.name + " p=" + std::to_string(c.pipeline.stages);
        EXPECT_EQ(!validator.has_value(), k.refused) << what;
        ASSERT_EQ(start.has_value(), validator.has_value()) << what;
        if (!validator) {
            EXPECT_EQ(start.error().context, validator.error().context) << what;
            EXPECT_EQ(start.error().message, validator.error().message) << what;
        }
    }
    const Status chunks = preflightStart(tiny("dualpipev", 8, 16), MemoryCapacity{});
    ASSERT_FALSE(chunks);
    EXPECT_EQ(chunks.error().context, "pipeline.stages_per_rank");
    EXPECT_NE(chunks.error().message.find("16 model chunks for dualpipev exceed model.layers = 8"), std::string::npos)
        << chunks.error().message;
}

TEST(RunPreflight, StartAlsoRefusesWhatDoesNotFitMemory)
{
    MemoryCapacity capacity;
    capacity.hostBytes = estimate(1).totalBytes;
    const Status refused = preflightStart(bigRun("cpu"), capacity);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("(host RAM)"), std::string::npos) << refused.error().message;
    EXPECT_TRUE(preflightStart(bigRun("cpu", 1), capacity));
}

} // namespace
} // namespace bs::runtime
