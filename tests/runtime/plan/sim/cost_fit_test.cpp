// The b-dependent calibration: exact recovery of an affine truth from two micro-batch sizes, the
// proportional fallback with one, physical clamps, the fit error, and the tuner predicting
// through it exactly as withFittedTimes does.
#include "runtime/plan/sim/cost_fit.h"

#include "runtime/plan/sim/tuner.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

/// Stage s: F = (1 + s) ms + 0.5 ms·b, I = W = F, U = 2 ms (an affine device).
MeasuredCosts affineDevice(int stages, int b)
{
    MeasuredCosts m;
    for (int s = 0; s < stages; ++s) {
        StageCost c;
        c.forward = (1 + s) * kNsPerMs + b * kNsPerMs / 2;
        c.backwardInput = c.forward;
        c.backwardWeight = c.forward;
        c.update = 2 * kNsPerMs;
        m.stages.push_back(c);
        m.computeEvents.push_back(10);
    }
    return m;
}

TEST(CostFit, TwoMicroBatchSizesRecoverAnAffineDevice)
{
    auto fit = fitCosts({{"run b2", "paci", 2, affineDevice(4, 2)}, {"run b8", "1f1b", 8, affineDevice(4, 8)}});
    ASSERT_TRUE(fit) << fit.error().describe();
    EXPECT_TRUE(fit->affine());
    EXPECT_NEAR(fit->maxRelativeError, 0.0, 1e-9);
    // An unmeasured b is predicted as the device would measure it.
    for (int s = 0; s < 4; ++s) {
        EXPECT_EQ(fit->stages[s].forward.at(4), affineDevice(4, 4).stages[s].forward);
        EXPECT_EQ(fit->stages[s].update, 2 * kNsPerMs);
    }
    EXPECT_NE(fit->describe().find("affine in b"), std::string::npos);
    EXPECT_NE(fit->describe().find("run b2, run b8"), std::string::npos);
}

TEST(CostFit, OneMicroBatchSizeScalesProportionally)
{
    auto fit = fitCosts({{"run", "paci", 4, affineDevice(2, 4)}});
    ASSERT_TRUE(fit);
    EXPECT_FALSE(fit->affine());
    const TimeNs at4 = affineDevice(2, 4).stages[0].forward;
    EXPECT_EQ(fit->stages[0].forward.at(4), at4);
    EXPECT_EQ(fit->stages[0].forward.at(8), 2 * at4);
    EXPECT_NE(fit->describe().find("one b measured"), std::string::npos);
}

TEST(CostFit, ClampsToPhysicalFitsAndReportsTheError)
{
    // Noise: b = 8 measured faster than b = 2. No negative slope: the time is flat at the mean.
    MeasuredCosts fast = affineDevice(1, 2);
    MeasuredCosts slow = affineDevice(1, 2);
    fast.stages[0].forward = 9 * kNsPerMs;
    slow.stages[0].forward = 11 * kNsPerMs;
    auto flat = fitCosts({{"a", "paci", 2, slow}, {"b", "paci", 8, fast}});
    ASSERT_TRUE(flat);
    EXPECT_EQ(flat->stages[0].forward.perSampleNs, 0.0);
    EXPECT_EQ(flat->stages[0].forward.at(100), 10 * kNsPerMs);
    EXPECT_GT(flat->maxRelativeError, 0.0);
    // Superlinear growth would extrapolate to a negative fixed cost: fit through the origin.
    MeasuredCosts small = affineDevice(1, 1);
    MeasuredCosts big = affineDevice(1, 1);
    small.stages[0].forward = 1 * kNsPerMs;
    big.stages[0].forward = 10 * kNsPerMs;
    auto origin = fitCosts({{"a", "paci", 1, small}, {"b", "paci", 4, big}});
    ASSERT_TRUE(origin);
    EXPECT_EQ(origin->stages[0].forward.fixedNs, 0.0);
    EXPECT_GT(origin->stages[0].forward.perSampleNs, 0.0);
}

TEST(CostFit, RejectsEmptyAndMixedStageCounts)
{
    EXPECT_FALSE(fitCosts({}));
    auto mixed = fitCosts({{"four", "paci", 2, affineDevice(4, 2)}, {"two", "paci", 4, affineDevice(2, 4)}});
    ASSERT_FALSE(mixed);
    EXPECT_NE(mixed.error().describe().find("two"), std::string::npos);
}

TEST(CostFit, MicroBatchSizeMovesThroughputOnAnAffineDevice)
{
    // With a fixed cost per action, larger b amortises it: throughput must rise with b (the
    // linear model of before kept it flat).
    auto fit = fitCosts({{"b2", "paci", 2, affineDevice(8, 2)}, {"b8", "paci", 8, affineDevice(8, 8)}});
    ASSERT_TRUE(fit);
    TuneRequest request;
    request.base.schedule = "paci";
    request.base.shape = *gptPreset("tiny");
    request.base.device = *deviceProfile("cpu");
    request.accumValues = {8};
    request.microBatchSizes = {2, 4, 8, 16};
    request.maxLag = 8;
    request.keep = 10;
    request.calibration = *fit;
    auto result = tune(request);
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_EQ(result->top.size(), 4u);
    EXPECT_EQ(result->top.front().microBatchSize, 16);
    EXPECT_EQ(result->top.back().microBatchSize, 2);
    EXPECT_GT(result->top.front().throughputSamplesPerSecond, 1.5 * result->top.back().throughputSamplesPerSecond);
}

} // namespace
} // namespace bs::runtime

namespace bs::runtime {
namespace {

TEST(CostFit, EachScheduleIsAnchoredAtItsOwnRun)
{
    // 1F1B measured 20 % slower than PACI at b = 4; PACI measured at b = 2 and 8. The 1F1B fit passes
    // through its own run and keeps the pooled shape in b; PACI's uses its own two runs only.
    MeasuredCosts slower = affineDevice(2, 4);
    for (auto& c : slower.stages) {
        c.forward = c.forward * 6 / 5;
    }
    const std::vector<CostSample> samples{{"paci b2", "paci", 2, affineDevice(2, 2)},
        {"paci b8", "paci", 8, affineDevice(2, 8)}, {"1f1b b4", "1f1b", 4, slower}};
    auto flush = fitCostsFor(samples, "1f1b");
    auto paci = fitCostsFor(samples, "paci");
    auto other = fitCostsFor(samples, "gpipe");
    ASSERT_TRUE(flush && paci && other);
    for (int s = 0; s < 2; ++s) {
        EXPECT_NEAR(
            static_cast<double>(flush->stages[s].forward.at(4)), static_cast<double>(slower.stages[s].forward), 1.0);
        EXPECT_GT(flush->stages[s].forward.fixedNs, 0.0); // the affine shape survived the anchoring
        EXPECT_EQ(paci->stages[s].forward.at(4), affineDevice(2, 4).stages[s].forward);
    }
    EXPECT_EQ(paci->sources, (std::vector<std::string>{"paci b2", "paci b8"}));
    EXPECT_EQ(other->sources.size(), 3u); // no gpipe run: all of them
}

} // namespace
} // namespace bs::runtime
