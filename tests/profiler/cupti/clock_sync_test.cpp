#include "profiler/cupti/clock_sync.h"

#include <gtest/gtest.h>

#include <vector>

using namespace bs::profiler::cupti;

TEST(ClockSync, UsesTheTightestSampleAndItsMidpoint)
{
    const std::vector<ClockSample> samples = {
        {1'000, 5'000'000, 3'000},  // latency 2000
        {10'000, 5'009'500, 10'200}, // latency 200: GPU 5'009'500 <-> host 10'100
        {20'000, 5'019'000, 21'000},
    };
    const auto sync = ClockSync::fromSamples(samples);
    EXPECT_EQ(sync.gpuRef(), 5'009'500u);
    EXPECT_EQ(sync.hostRef(), 10'100);
    EXPECT_EQ(sync.toHost(5'009'500), 10'100);
    EXPECT_EQ(sync.toHost(5'010'000), 10'600);
    EXPECT_EQ(sync.toHost(5'009'000), 9'600); // before the reference: negative offset
}

TEST(ClockSync, RefineCorrectsDrift)
{
    const std::vector<ClockSample> first = {{1'000'000, 0, 1'000'000}};
    auto sync = ClockSync::fromSamples(first);
    // After 1 s of GPU time the host has advanced 1 s + 100 us: the GPU clock runs 100 ppm slow.
    sync.refine({1'000'000 + 1'000'100'000, 1'000'000'000, 1'000'000 + 1'000'100'000});
    EXPECT_NEAR(sync.rate(), 1.0001, 1e-12);
    EXPECT_EQ(sync.toHost(500'000'000), 1'000'000 + 500'050'000);
}

TEST(ClockSync, RefineIgnoresTooShortIntervals)
{
    const std::vector<ClockSample> first = {{0, 0, 0}};
    auto sync = ClockSync::fromSamples(first);
    sync.refine({600'000, 500'000, 600'000}); // 0.5 ms: jitter would dominate
    EXPECT_EQ(sync.rate(), 1.0);
}
