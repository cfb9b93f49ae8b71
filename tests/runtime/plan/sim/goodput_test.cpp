// Time to target as the tuner's objective: the statistical model (goodput.h), the steady
// throughput it divides by, and the ranking they make together.
#include "runtime/plan/sim/goodput.h"

#include "runtime/plan/sim/steady_state.h"
#include "runtime/plan/sim/tuner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace bs::runtime {
namespace {

TuneRequest paciGrid()
{
    TuneRequest r;
    r.base.schedule = "paci";
    r.base.stages = 8;
    r.base.shape = gptPreset("tiny").value();
    r.base.device = deviceProfile("cpu").value();
    r.accumValues = {1, 2, 4, 8, 16, 32};
    r.microBatchSizes = {8};
    r.maxLag = 100;
    r.keep = 100;
    return r;
}

TEST(SteadyThroughput, IsTheSteadyPeriodNotAFixedCountsAmortisedWarmUp)
{
    TuneRequest r = paciGrid();
    std::vector<double> steady;
    for (int a : {8, 32}) {
        GptScenario s = r.base;
        s.accum = a;
        s.batches = 4;
        auto request = makeGptRequest(s);
        ASSERT_TRUE(request);
        auto fixed = simulate(*request);
        auto st = steadyThroughput(*request);
        ASSERT_TRUE(fixed && st);
        EXPECT_TRUE(st->reached) << "a=" << a;
        // Four batches still carry the warm-up: the steady figure is higher.
        EXPECT_GT(st->samplesPerSecond, fixed->throughputSamplesPerSecond) << "a=" << a;
        steady.push_back(st->samplesPerSecond);
    }
    // PACI's window barely moves the steady throughput (the research note: 0.996 vs 0.998).
    EXPECT_NEAR(steady[1] / steady[0], 1.0, 0.02);
}

// PACI's smallest windows at p = 8 on the tiny GPT's CPU costs warm up for longer than the
// simulator's first short runs (K = 4): it settles them at a longer K, the figures still equal the
// plain run's, and the period the tuner reads is the plain run's own increment per batch.
TEST(SteadyThroughput, LongWarmUpsSettleAtALongerShortRun)
{
    TuneRequest r = paciGrid();
    int settledLate = 0;
    for (int a : {1, 2, 4, 8}) {
        SCOPED_TRACE("paci a=" + std::to_string(a));
        GptScenario s = r.base;
        s.accum = a;
        s.batches = 256;
        auto request = makeGptRequest(s);
        ASSERT_TRUE(request);
        request->figuresOnly = true;
        auto figures = simulate(*request);
        ASSERT_TRUE(figures);
        ASSERT_GT(figures->steadyBatchPeriodNs, 0) << "not settled within 256 batches";
        settledLate += figures->settledAtBatches > kSettleBatches ? 1 : 0;
        request->figuresOnly = false;
        auto whole = simulate(*request);
        request->schedule.batches = 257;
        auto oneMore = simulate(*request);
        ASSERT_TRUE(whole && oneMore);
        EXPECT_EQ(figures->steadyBatchPeriodNs, oneMore->report.makespan - whole->report.makespan);
        whole->report.bubbles.clear();
        EXPECT_TRUE(sameReport(whole->report, figures->report));
        auto st = steadyThroughput(*request);
        ASSERT_TRUE(st);
        EXPECT_TRUE(st->reached);
        EXPECT_DOUBLE_EQ(st->batchPeriodS, static_cast<double>(figures->steadyBatchPeriodNs) * 1e-9);
    }
    EXPECT_GE(settledLate, 1); // the case the first short runs alone missed (Tuner.LargestWindowIsNotPicked)
}

TEST(Goodput, FitRecoversTheLagCostAndSamplesMin)
{
    const NoiseScaleInput noise{100.0, 10.0, "run X"};
    std::vector<TargetRun> runs;
    for (int lag = 0; lag < 4; ++lag) {
        const double b = 8.0 * (1 << lag);
        runs.push_back({"run " + std::to_string(lag), 1000.0 * (1 + b / 100.0) * std::pow(1.05, lag), b, lag});
    }
    auto model = GoodputModel::fit(noise, runs);
    ASSERT_TRUE(model) << model.error().describe();
    EXPECT_TRUE(model->lagCostFitted());
    EXPECT_NEAR(model->lagCost(), 0.05, 1e-9);
    EXPECT_NEAR(model->samplesToTarget(8, 0), 1080.0, 1e-6);
    EXPECT_NE(model->describe().find("lag 1 costs +5.0"), std::string::npos) << model->describe();
    // One run fixes E_min but not the lag cost: said so, factor 1.
    auto one = GoodputModel::fit(noise, {runs.front()});
    ASSERT_TRUE(one);
    EXPECT_FALSE(one->lagCostFitted());
    EXPECT_DOUBLE_EQ(one->stalenessFactor(3), 1.0);
    EXPECT_NE(one->describe().find("not fitted"), std::string::npos);
    EXPECT_GT(one->relativeSpread(8, 3), one->relativeSpread(8, 0)); // wide where the lag is unfitted
    EXPECT_FALSE(GoodputModel::fit(noise, {{"bad", -1, 8, 0}}));
}

TEST(Goodput, TwoRunsAtTwoLagsFitTheLagCostExactly)
{
    // The oracle's calibration (tests/bench/time_to_target_grid.sh): PACI a = 8 (B 32, lag 1) and
    // a = 2 (B 8, lag 4). Two unknowns, two runs: E_min and c through both points; before, the
    // slope was dropped and every row was predicted at lag 0's cost.
    const NoiseScaleInput noise{20.0, 5.0, "run X"};
    const auto samples = [&](double b, int lag) { return 900.0 * (1 + b / 20.0) * std::pow(1.1, lag); };
    auto model = GoodputModel::fit(noise, {{"a8", samples(32, 1), 32, 1}, {"a2", samples(8, 4), 8, 4}});
    ASSERT_TRUE(model) << model.error().describe();
    EXPECT_TRUE(model->lagCostFitted());
    EXPECT_NEAR(model->lagCost(), 0.1, 1e-9);
    EXPECT_NEAR(model->samplesToTarget(32, 1), samples(32, 1), 1e-6);
    EXPECT_NEAR(model->samplesToTarget(4, 7), samples(4, 7), 1e-6);
    // No residual measures the fit: the spread stays wide, and the lag cost's the unfitted one.
    EXPECT_GE(model->relativeSpread(32, 1), 0.25);
}

TEST(Goodput, NoiseScaleFromTheRunsLateEstimates)
{
    auto n = noiseScaleFromHistory({NAN, 5, 5, 400, 420, 380, 400}, "run X");
    ASSERT_TRUE(n);
    EXPECT_NEAR(n->bNoise, 400, 1e-9); // the last half only
    EXPECT_GT(n->spread, 0);
    EXPECT_FALSE(noiseScaleFromHistory({NAN, -1}, "run Y"));
}

TEST(Goodput, RunsNoiseScalesCombineByPrecisionNotByCount)
{
    // PACI a = 2 (B_big = 2 B_small) measures many estimates, all noisy; a = 8 fewer, tighter.
    auto both = combineNoiseScales({{3.5, 0.5, "run a8"}, {20.0, 15.0, "run a2"}});
    ASSERT_TRUE(both);
    EXPECT_NEAR(both->bNoise, (3.5 / 0.25 + 20.0 / 225.0) / (1 / 0.25 + 1 / 225.0), 1e-9);
    EXPECT_LT(both->bNoise, 3.6);
    EXPECT_LT(both->spread, 0.5); // two measurements: tighter than either
    EXPECT_NE(both->source.find("run a8 (3.5 ± 0.5), run a2 (20.0 ± 15.0)"), std::string::npos) << both->source;
    // Equal precision: the plain mean; one estimate: itself; none: nothing.
    EXPECT_NEAR(combineNoiseScales({{10, 2, "x"}, {20, 2, "y"}})->bNoise, 15.0, 1e-9);
    EXPECT_EQ(combineNoiseScales({{10, 2, "x"}})->source, "x");
    EXPECT_FALSE(combineNoiseScales({}));
    // A spread of 0 (identical late values) counts as 1 % of the mean (weight 100 against 25),
    // not as infinitely precise.
    EXPECT_NEAR(combineNoiseScales({{10, 0, "x"}, {20, 0.2, "y"}})->bNoise, 12.0, 1e-9);
}

TEST(Tuner, LargestWindowIsNotPickedWhenTheNoiseScaleMakesItSlower)
{
    TuneRequest byThroughput = paciGrid();
    auto fast = tune(byThroughput);
    ASSERT_TRUE(fast) << fast.error().describe();
    ASSERT_FALSE(fast->top.empty());
    // By throughput alone the largest windows win (a barely moves it, and never down).
    EXPECT_GE(fast->top.front().accum, 16);

    // A small measured noise scale: past B ≈ 32 samples each sample buys much less progress.
    TuneRequest byTime = paciGrid();
    byTime.objective = TuneObjective::TimeToTarget;
    byTime.goodput = GoodputModel::unfitted({32.0, 4.0, "test"});
    auto timed = tune(byTime);
    ASSERT_TRUE(timed) << timed.error().describe();
    ASSERT_FALSE(timed->top.empty());
    EXPECT_LT(timed->top.front().accum, 32);
    for (std::size_t i = 1; i < timed->top.size(); ++i) {
        EXPECT_LE(*timed->top[i - 1].timeToTargetS, *timed->top[i].timeToTargetS);
    }
    const TuneCandidate& best = timed->top.front();
    EXPECT_EQ(best.batchPerUpdate, best.accum * 8L);
    EXPECT_NEAR(best.efficiency, 1.0 / (1.0 + best.batchPerUpdate / 32.0), 1e-12);
    EXPECT_TRUE(best.steady);
    // The largest window is really slower to target under this model.
    const auto largest =
        std::find_if(timed->top.begin(), timed->top.end(), [](const TuneCandidate& c) { return c.accum == 32; });
    ASSERT_NE(largest, timed->top.end());
    EXPECT_GT(*largest->timeToTargetS, *best.timeToTargetS);
}

TEST(Tuner, TimeToTargetNeedsANoiseScale)
{
    TuneRequest r = paciGrid();
    r.objective = TuneObjective::TimeToTarget;
    auto result = tune(r);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("noise scale"), std::string::npos);
}

} // namespace
} // namespace bs::runtime
