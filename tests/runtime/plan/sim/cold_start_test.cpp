// A process's first actions run slower than its steady ones (allocator growth, intra-op thread
// start-up, first-call kernel selection). On the 2-core CI machine, with the training thread never
// preempted (chrt -f), the tiny GPT's first forward on stage 0 took 1.0-1.2 ms against a steady
// 0.14 ms, and every stage's first F, B and U were slow too. Micro-batch 0's chain (each stage's
// first F, then each first B) is on the critical path of every schedule, so those one-time costs
// delay the whole run; a per-stage mean spreads them over 12 actions and a replay of means absorbs
// most of the delay: PACI, trained first in its process, was predicted 13-17 % too fast.
//
// These runs are recorded by the scheduler core with an executor of this file (steady times plus
// a one-time extra on the first action of each kind on each stage, as measured), so the check is
// exact: the calibration must predict the run's own makespan, and a prediction of steady means
// alone (the calibration before the cold-start costs) misses it by more than 10 %.
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/cost_fit.h"
#include "runtime/plan/sim/measured_costs.h"
#include "runtime/plan/sim/scheduler_core.h"
#include "runtime/plan/sim/simulator.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>

namespace bs::runtime {
namespace {

constexpr TimeNs us(double v)
{
    return static_cast<TimeNs>(v * kNsPerUs);
}

/// Steady times of the tiny GPT at b = 2 as measured (F 150 µs, B 300 µs, U 200 µs), and the
/// first action's extra on each stage: stage 0's first forward pays the process's start-up.
StageCost steady()
{
    StageCost c;
    c.forward = us(150);
    c.backwardInput = us(150);
    c.backwardWeight = us(150);
    c.update = us(200);
    return c;
}

std::array<TimeNs, 3> coldExtra(int stage) // F, B (or I), U
{
    return stage == 0 ? std::array<TimeNs, 3>{us(1000), us(400), us(100)}
                      : std::array<TimeNs, 3>{us(150), us(200), us(50)};
}

/// The "device": steady times, plus the one-time extra on the first F, B/I, W and U of a stage.
class ColdStartExecutor final : public ActionExecutor
{
public:
    explicit ColdStartExecutor(int stages)
        : m_seen(static_cast<std::size_t>(stages))
    {}

    Result<ActionOutcome> perform(const Action& action) override
    {
        const StageCost c = steady();
        ActionOutcome out;
        out.duration = c.duration(action.kind);
        const auto extra = coldExtra(action.stage);
        const auto kind = static_cast<std::size_t>(action.kind);
        bool& seen = m_seen[static_cast<std::size_t>(action.stage)][kind];
        if (!seen) {
            seen = true;
            switch (action.kind) {
            case ActionKind::Forward:
                out.duration += extra[0];
                break;
            case ActionKind::Backward:
            case ActionKind::BackwardInput:
                out.duration += extra[1];
                break;
            case ActionKind::BackwardWeight:
                out.duration += extra[1] / 2;
                break;
            case ActionKind::Update:
                out.duration += extra[2];
                break;
            case ActionKind::OverlapForwardBackward:
                break;
            }
        }
        return out;
    }
    TimeNs commTime(int, int, std::int64_t) const override { return 0; }

private:
    std::vector<std::array<bool, 8>> m_seen;
};

struct Recorded
{
    Schedule schedule;
    std::shared_ptr<const profiler::TraceSnapshot> trace;
    TimeNs makespan = 0;
};

/// The tiny GPT's test run: 4 stages, m = 4, 3 global batches.
Recorded record(const std::string& name)
{
    ScheduleParams params;
    params.name = name;
    params.stages = 4;
    params.microbatches = 4;
    params.batches = 3;
    auto schedule = makeSchedule(params);
    EXPECT_TRUE(schedule) << schedule.error().describe();
    profiler::TraceStore store(traceMetaFor(*schedule));
    ColdStartExecutor device(4);
    auto stats = drive(*schedule, device, store);
    EXPECT_TRUE(stats) << stats.error().describe();
    return {*schedule, store.snapshot(), stats ? stats->makespan : 0};
}

double predictedError(const Recorded& run, const CostModel& costs)
{
    auto predicted = simulateSchedule(run.schedule, costs, 2);
    EXPECT_TRUE(predicted) << predicted.error().describe();
    return static_cast<double>(predicted->report.makespan) / static_cast<double>(run.makespan) - 1.0;
}

class ColdStart : public ::testing::TestWithParam<const char*>
{};

TEST_P(ColdStart, MeasuredFirstActionsAreCostedOnceAndPredictTheRun)
{
    const Recorded run = record(GetParam());
    auto measured = measuredCosts(*run.trace, 4);
    ASSERT_TRUE(measured) << measured.error().describe();
    // The steady times are what the stage does after its first action of each kind ...
    for (int s = 0; s < 4; ++s) {
        const StageCost& got = measured->stages[static_cast<std::size_t>(s)];
        EXPECT_EQ(got.forward, steady().forward) << s;
        EXPECT_EQ(got.duration(ActionKind::Backward), steady().duration(ActionKind::Backward)) << s;
        EXPECT_EQ(got.update, steady().update) << s;
        // ... and the first one's extra is kept apart, once per stage and kind.
        EXPECT_EQ(got.cold.forward, coldExtra(s)[0]) << s;
        EXPECT_EQ(got.cold.update, coldExtra(s)[2]) << s;
    }
    // The one calibration every prediction uses (fitted, then merged into a model) predicts the
    // run's own settings exactly: a replay of what it measured.
    auto fit = fitCosts({{"cold run", GetParam(), 2, *measured}});
    ASSERT_TRUE(fit) << fit.error().describe();
    const CostModel calibrated = withFittedTimes(CostModel{}, *fit, 2);
    const double err = predictedError(run, calibrated);
    EXPECT_NEAR(err, 0.0, 1e-3) << GetParam();
    // Steady times alone (no one-time costs) predict the run far too fast: the effect is real.
    CostModel steadyOnly = calibrated;
    for (auto& s : steadyOnly.stages) {
        s.cold = {};
    }
    EXPECT_LT(predictedError(run, steadyOnly), -0.10) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Schedules, ColdStart, ::testing::Values("paci", "1f1b", "zb-h1"));

TEST(ColdStart, MeansOfEveryActionMissTheDelay)
{
    // What the calibration did before: every action in the mean, no one-time cost. PACI's
    // prediction is then more than 10 % off, the failure tst_trusted_tuner saw on real runs.
    const Recorded run = record("paci");
    CostModel means;
    means.stages.resize(4);
    std::array<std::array<TimeNs, 3>, 4> sum{};
    std::array<std::array<int, 3>, 4> count{};
    run.trace->forEach([&](const profiler::TraceEvent& e) {
        const int k = e.kind == profiler::EventKind::Forward ? 0 : e.kind == profiler::EventKind::Update ? 2 : 1;
        sum[e.stage][static_cast<std::size_t>(k)] += e.duration();
        ++count[e.stage][static_cast<std::size_t>(k)];
    });
    for (std::size_t s = 0; s < 4; ++s) {
        means.stages[s].forward = sum[s][0] / count[s][0];
        means.stages[s].backwardInput = sum[s][1] / count[s][1] / 2;
        means.stages[s].backwardWeight = sum[s][1] / count[s][1] - means.stages[s].backwardInput;
        means.stages[s].update = sum[s][2] / count[s][2];
    }
    EXPECT_LT(predictedError(run, means), -0.10);
}

} // namespace
} // namespace bs::runtime
