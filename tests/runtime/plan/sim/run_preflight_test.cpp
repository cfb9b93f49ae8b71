// Pre-flight of a whole run for each way it starts (issue 14): CPU, CUDA (one GPU, several, a
// distributed rank's own GPU) with fake capacities, so the CUDA branches are tested without one.
#include "runtime/plan/sim/run_preflight.h"

#include "runtime/plan/common/gpt_shape.h"
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
MemoryEstimate estimate(int b, int sharing = 0)
{
    GptScenario s;
    s.schedule = "1f1b";
    s.stages = 4;
    s.shape = gptPreset("gpt2-medium").value();
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
    const MemoryEstimate b1 = estimate(1);
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
    const MemoryEstimate two = estimate(1, 2);
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
    const MemoryEstimate one = estimate(1, 1);
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
    const MemoryEstimate one = estimate(1, 1);
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

} // namespace
} // namespace bs::runtime
