// runtime::tune(): every suggestion respects the drift bound and the memory budget, and the list
// is ranked by simulated steady throughput.
#include "runtime/plan/sim/tuner.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

TuneRequest baseRequest(const std::string& schedule)
{
    TuneRequest r;
    r.base.schedule = schedule;
    r.base.stages = 8;
    r.base.shape = gptPreset("tiny").value();
    r.base.device = deviceProfile("cpu").value();
    r.base.batches = 2;
    r.keep = 100;
    return r;
}

TEST(Tuner, PaciCandidatesRespectTheDriftBound)
{
    TuneRequest request = baseRequest("paci");
    request.maxLag = 1; // ⌈(p−1)/a⌉ <= 1 needs a >= 7 for p = 8
    const auto result = tune(request);
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_FALSE(result->top.empty());
    for (const auto& c : result->top) {
        EXPECT_GE(c.accum, 7);
        EXPECT_LE(c.lagBound, 1);
    }
    // a in {1, 2, 4} fails for each of the 5 micro-batch sizes.
    EXPECT_EQ(result->rejectedByLag, 15);
    EXPECT_EQ(result->evaluated, 30);
}

TEST(Tuner, CalibratedSearchRanksByTheMeasuredTimes)
{
    // Measured: every stage F = 4 ms, I = W = 4 ms, U = 1 ms at b = 2. Each candidate's figures
    // must be those of simulate() with the same calibrated cost model (compute scaled by b / 2).
    MeasuredCosts measured;
    for (int s = 0; s < 8; ++s) {
        StageCost c;
        c.forward = 4'000'000;
        c.backwardInput = 4'000'000;
        c.backwardWeight = 4'000'000;
        c.update = 1'000'000;
        measured.stages.push_back(c);
        measured.computeEvents.push_back(10);
    }
    TuneRequest request = baseRequest("paci");
    auto fit = fitCosts({CostSample{"run", "paci", 2, measured}});
    ASSERT_TRUE(fit);
    request.calibration = *fit;
    const auto calibrated = tune(request);
    const auto profiled = tune(baseRequest("paci"));
    ASSERT_TRUE(calibrated && profiled);
    ASSERT_FALSE(calibrated->top.empty());
    for (const auto& c : calibrated->top) {
        GptScenario scenario = request.base;
        scenario.accum = c.accum;
        scenario.microBatchSize = c.microBatchSize;
        auto sim = makeGptRequest(scenario);
        ASSERT_TRUE(sim);
        sim->costs = withMeasuredTimes(std::move(sim->costs), measured, c.microBatchSize / 2.0);
        const auto expected = steadyThroughput(*sim); // the steady state's, as tune() ranks by
        ASSERT_TRUE(expected);
        EXPECT_DOUBLE_EQ(c.throughputSamplesPerSecond, expected->samplesPerSecond)
            << "a=" << c.accum << " b=" << c.microBatchSize;
    }
    EXPECT_NE(calibrated->top.front().throughputSamplesPerSecond, profiled->top.front().throughputSamplesPerSecond);
}

TEST(Tuner, RankedByThroughput)
{
    const auto result = tune(baseRequest("paci"));
    ASSERT_TRUE(result);
    for (std::size_t i = 1; i < result->top.size(); ++i) {
        EXPECT_GE(result->top[i - 1].throughputSamplesPerSecond, result->top[i].throughputSamplesPerSecond);
    }
}

TEST(Tuner, NoPaciSettingHasZeroDrift)
{
    TuneRequest request = baseRequest("paci");
    request.maxLag = 0;
    const auto result = tune(request);
    ASSERT_TRUE(result);
    EXPECT_TRUE(result->top.empty());
    EXPECT_EQ(result->rejectedByLag, result->evaluated);
}

TEST(Tuner, FlushScheduleHasNoLag)
{
    TuneRequest request = baseRequest("1f1b");
    request.maxLag = 0;
    request.accumValues = {8, 16};
    const auto result = tune(request);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->rejectedByLag, 0);
    EXPECT_FALSE(result->top.empty());
}

TEST(Tuner, MemoryBudgetExcludesLargeMicroBatches)
{
    TuneRequest request = baseRequest("paci");
    request.accumValues = {8};
    const auto unlimited = tune(request);
    ASSERT_TRUE(unlimited);
    ASSERT_EQ(unlimited->top.size(), 5u);
    // Budget: the peak of b = 2; larger micro-batches hold more activations and must be rejected.
    std::int64_t budget = 0;
    for (const auto& c : unlimited->top) {
        if (c.microBatchSize == 2) {
            budget = c.peakMemoryBytes;
        }
    }
    ASSERT_GT(budget, 0);
    request.memoryBudgetBytes = budget;
    const auto limited = tune(request);
    ASSERT_TRUE(limited);
    EXPECT_EQ(limited->rejectedByMemory, 3); // b = 4, 8, 16
    for (const auto& c : limited->top) {
        EXPECT_LE(c.peakMemoryBytes, budget);
        EXPECT_LE(c.microBatchSize, 2);
    }
}

TEST(Tuner, FixedGlobalBatch)
{
    TuneRequest request = baseRequest("paci");
    request.globalBatch = 64;
    const auto result = tune(request);
    ASSERT_TRUE(result);
    ASSERT_FALSE(result->top.empty());
    for (const auto& c : result->top) {
        EXPECT_EQ(c.accum * c.microBatchSize, 64);
    }
}

// Schedules whose m is constrained: paci-interleaved (m a multiple of p, a dividing m) takes every
// window, simulated at the fewest m its rules allow; interleaved 1F1B (a = m) lists only multiples
// of p and counts the rest as refused, so no row is a setting the schedule cannot run.
TEST(Tuner, ConstrainedSchedulesListOnlySettingsTheyRun)
{
    TuneRequest paci = baseRequest("paci-interleaved");
    paci.base.stages = 4;
    paci.base.stagesPerRank = 2;
    paci.accumValues = {1, 2, 4, 8};
    paci.microBatchSizes = {2};
    paci.maxLag = 100;
    auto windows = tune(paci);
    ASSERT_TRUE(windows) << windows.error().describe();
    EXPECT_EQ(windows->top.size(), 4u);
    EXPECT_EQ(windows->rejectedByBatch, 0);
    GptScenario atTwo = paci.base;
    atTwo.accum = 2;
    atTwo.microBatchSize = 2;
    auto request = makeGptRequest(atTwo);
    ASSERT_TRUE(request);
    EXPECT_EQ(request->schedule.microbatches, 4);
    EXPECT_EQ(request->schedule.accum, 2);

    TuneRequest flush = baseRequest("interleaved-1f1b");
    flush.base.stages = 4;
    flush.base.stagesPerRank = 2;
    flush.accumValues = {1, 2, 4, 6, 8};
    flush.microBatchSizes = {2};
    auto multiples = tune(flush);
    ASSERT_TRUE(multiples) << multiples.error().describe();
    ASSERT_EQ(multiples->top.size(), 2u);
    for (const auto& c : multiples->top) {
        EXPECT_EQ(c.accum % 4, 0) << c.accum;
    }
    EXPECT_EQ(multiples->rejectedByBatch, 3);

    // Schedules that update per micro-batch (their window is 1, not a) take every a = m: none is
    // refused by the rules on m, whatever drift then rejects.
    for (const char* perMicrobatch : {"pipedream", "async-1f1b"}) {
        TuneRequest stash = baseRequest(perMicrobatch);
        stash.base.stages = 4;
        stash.accumValues = {1, 2, 4, 8};
        stash.microBatchSizes = {2};
        stash.maxLag = 100;
        auto any = tune(stash);
        ASSERT_TRUE(any) << any.error().describe();
        EXPECT_EQ(any->rejectedByBatch, 0) << perMicrobatch;
        EXPECT_EQ(any->top.size(), 4u) << perMicrobatch;
    }
}

// A windowed schedule simulates the run's own m when it is whole windows the schedule takes (an
// opened PACI run at m = 16, a = 4 is predicted at 16, not 4: its fill and drain weigh 4x less),
// else the fewest; a schedule without a window has m = a whatever the run's m.
TEST(Tuner, WindowedScheduleKeepsTheRunsMicrobatches)
{
    GptScenario s = baseRequest("paci").base;
    s.accum = 4;
    const auto mOf = [&](const std::string& schedule, int microbatches) {
        GptScenario scenario = s;
        scenario.schedule = schedule;
        scenario.microbatches = microbatches;
        auto request = makeGptRequest(scenario);
        EXPECT_TRUE(request) << request.error().describe();
        return request ? request->schedule.microbatches : -1;
    };
    EXPECT_EQ(mOf("paci", 16), 16);
    EXPECT_EQ(mOf("paci", 0), 4); // none given: the fewest whole windows
    EXPECT_EQ(mOf("paci", 6), 4); // not whole windows of 4
    EXPECT_EQ(mOf("1f1b", 16), 4); // no window: it updates every m, and m is a
    EXPECT_EQ(mOf("paci-interleaved", 12), 8); // p = 8 ranks: m a multiple of 8 (12 is refused)
    EXPECT_EQ(mOf("paci-interleaved", 24), 24);
    // The prediction at the run's own m is the simulation of that run, and differs from m = a.
    GptScenario own = s;
    own.microbatches = 16;
    const auto atOwn = simulate(*makeGptRequest(own));
    SimulationRequest direct = *makeGptRequest(s);
    direct.schedule.microbatches = 16;
    const auto explicitRun = simulate(direct);
    ASSERT_TRUE(atOwn && explicitRun);
    EXPECT_EQ(atOwn->report.makespan, explicitRun->report.makespan);
    const auto atFewest = simulate(*makeGptRequest(s));
    ASSERT_TRUE(atFewest);
    EXPECT_LT(atOwn->report.bubbleFraction, atFewest->report.bubbleFraction);
}

TEST(Tuner, UnknownScheduleIsAnError)
{
    const auto result = tune(baseRequest("no-such-schedule"));
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::InvalidArgument);
}

} // namespace
} // namespace bs::runtime
