#include "runtime/plan/sim/measured_costs.h"

#include "runtime/plan/sim/simulator.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

/// Different times on every stage, so a mix-up of stages or kinds shows.
CostModel unevenModel(int stages)
{
    CostModel model;
    for (int s = 0; s < stages; ++s) {
        StageCost c;
        c.forward = (10 + s) * kNsPerUs;
        c.backwardInput = (12 + 2 * s) * kNsPerUs;
        c.backwardWeight = (7 + s) * kNsPerUs;
        c.update = (30 + 3 * s) * kNsPerUs;
        model.stages.push_back(c);
    }
    return model;
}

Result<SimulationResult> run(const std::string& schedule, const CostModel& costs, int stages = 4)
{
    SimulationRequest request;
    request.schedule.name = schedule;
    request.schedule.stages = stages;
    request.schedule.microbatches = 8;
    request.schedule.batches = 2;
    request.costs = costs;
    return simulate(request);
}

TEST(MeasuredCosts, RecoversPerStageSplitTimesFromAZeroBubbleTrace)
{
    const CostModel truth = unevenModel(4);
    auto sim = run("zb-h1", truth);
    ASSERT_TRUE(sim) << sim.error().describe();
    auto measured = measuredCosts(*sim->trace);
    ASSERT_TRUE(measured) << measured.error().describe();
    ASSERT_EQ(measured->stageCount(), 4);
    for (std::size_t s = 0; s < 4; ++s) {
        EXPECT_EQ(measured->stages[s].forward, truth.stages[s].forward) << s;
        EXPECT_EQ(measured->stages[s].backwardInput, truth.stages[s].backwardInput) << s;
        EXPECT_EQ(measured->stages[s].backwardWeight, truth.stages[s].backwardWeight) << s;
        EXPECT_EQ(measured->stages[s].update, truth.stages[s].update) << s;
        EXPECT_GT(measured->computeEvents[s], 16);
    }
}

TEST(MeasuredCosts, FusedBackwardIsSplitEvenlyAndReplaysToTheSameMakespan)
{
    const CostModel truth = unevenModel(4);
    auto sim = run("1f1b", truth);
    ASSERT_TRUE(sim) << sim.error().describe();
    auto measured = measuredCosts(*sim->trace);
    ASSERT_TRUE(measured) << measured.error().describe();
    for (std::size_t s = 0; s < 4; ++s) {
        EXPECT_EQ(measured->stages[s].duration(ActionKind::Backward), truth.stages[s].duration(ActionKind::Backward));
        EXPECT_LE(std::abs(measured->stages[s].backwardInput - measured->stages[s].backwardWeight), 1);
    }
    // Replaying the measured costs under the same schedule predicts the recorded run exactly.
    auto replay = run("1f1b", withMeasuredTimes(CostModel{}, *measured));
    ASSERT_TRUE(replay);
    EXPECT_EQ(replay->report.makespan, sim->report.makespan);
    EXPECT_DOUBLE_EQ(replay->report.bubbleFraction, sim->report.bubbleFraction);
}

TEST(MeasuredCosts, MergesIntoAModelKeepingBytesAndRescales)
{
    const CostModel truth = unevenModel(4);
    auto sim = run("1f1b", truth);
    ASSERT_TRUE(sim);
    auto measured = measuredCosts(*sim->trace);
    ASSERT_TRUE(measured);

    CostModel withBytes = CostModel::uniform(4, 1, 1, 1, 1, 5 * kNsPerUs);
    withBytes.commBytesPerSecond = 1e9;
    withBytes.stages[2].paramBytes = 1234;
    const CostModel same = withMeasuredTimes(withBytes, *measured, 2.0);
    EXPECT_EQ(same.stages[2].paramBytes, 1234);
    EXPECT_EQ(same.stages[2].forward, 2 * truth.stages[2].forward);
    EXPECT_EQ(same.stages[2].update, truth.stages[2].update); // updates do not scale with the micro-batch
    EXPECT_EQ(same.commLatency, 0); // no Send events in a simulated trace without transfers
    EXPECT_EQ(same.commBytesPerSecond, 0);

    // Two stages instead of four: each gets half of the four stages' total.
    const CostModel halved = withMeasuredTimes(CostModel::uniform(2, 1, 1, 1), *measured);
    TimeNs forwardTotal = 0;
    for (const auto& s : truth.stages) {
        forwardTotal += s.forward;
    }
    ASSERT_EQ(halved.stages.size(), 2u);
    EXPECT_EQ(halved.stages[0].forward, forwardTotal / 2);
    EXPECT_EQ(halved.stages[1].forward, forwardTotal / 2);
}

TEST(MeasuredCosts, RefusesTracesThatCannotCalibrate)
{
    EXPECT_FALSE(measuredCosts(profiler::TraceSnapshot{}, 4));

    profiler::TraceMeta meta;
    meta.stages = 2;
    std::vector<profiler::TraceEvent> events(1);
    events[0].start = 0;
    events[0].end = 10;
    events[0].stage = 0;
    events[0].kind = profiler::EventKind::Forward;
    auto onlyForward = measuredCosts(*profiler::makeSnapshot(meta, events));
    ASSERT_FALSE(onlyForward);
    EXPECT_NE(onlyForward.error().message.find("no forward or no backward"), std::string::npos);

    events[0].stage = 5;
    auto outOfRange = measuredCosts(*profiler::makeSnapshot(meta, events));
    ASSERT_FALSE(outOfRange);
    EXPECT_NE(outOfRange.error().message.find("stage 5"), std::string::npos);
}

} // namespace
} // namespace bs::runtime
