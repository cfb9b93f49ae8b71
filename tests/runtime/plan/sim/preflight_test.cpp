#include "runtime/plan/sim/preflight.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

GptScenario scenario(const char* model, int b)
{
    GptScenario s;
    s.schedule = "1f1b";
    s.stages = 4;
    s.shape = gptPreset(model).value();
    s.device = deviceProfile("cpu").value();
    s.accum = 4;
    s.microBatchSize = b;
    s.batches = 1;
    return s;
}

// Issue 14: gpt2-medium at b = 512 ran 76 s to 6.9 GB before failing; the simulator knew.
TEST(Preflight, RefusesWithTheEstimateAndTheNearestSizeThatFits)
{
    const auto at8 = estimateMemory(scenario("tiny", 8)).value();
    const auto at4 = estimateMemory(scenario("tiny", 4)).value();
    const auto at2 = estimateMemory(scenario("tiny", 2)).value();
    ASSERT_GT(at8.totalBytes, at4.totalBytes); // activations grow with b
    ASSERT_GT(at4.totalBytes, at2.totalBytes);
    EXPECT_GE(at8.totalBytes, at8.peakStageBytes);
    EXPECT_TRUE(checkMemoryFits(scenario("tiny", 8), at8.totalBytes)); // exactly enough
    EXPECT_TRUE(checkMemoryFits(scenario("tiny", 8), 0)); // unknown: no check
    Status tight = checkMemoryFits(scenario("tiny", 8), at4.totalBytes);
    ASSERT_FALSE(tight);
    EXPECT_EQ(tight.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(tight.error().message.find("nearest setting that fits: --micro-batch-size 4"), std::string::npos)
        << tight.error().message;
    Status none = checkMemoryFits(scenario("gpt2-medium", 512), std::int64_t{8} << 30);
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("GiB"), std::string::npos);
    // Two stages sharing one device count the two heaviest.
    const auto two = estimateMemory(scenario("tiny", 8), 2).value();
    EXPECT_LT(two.totalBytes, at8.totalBytes);
    EXPECT_GE(two.totalBytes, at8.peakStageBytes);
}

TEST(Preflight, HostMemoryIsKnownOnLinux)
{
    EXPECT_GT(availableHostMemoryBytes(), std::int64_t{64} << 20);
}

} // namespace
} // namespace bs::runtime
