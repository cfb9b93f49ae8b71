// The scheduler core replays a drive's steady state (periodic_replay.h): once its state after a
// batch of actions is the one a batch earlier moved by a period, it writes the repeated batches as
// moved copies instead of performing them. The trace must be the one the drive writes action by
// action (appendBatch 1: never replayed), event for event and field for field, for every schedule
// of the catalogue, placements, cost models with and without comm, uneven stages, an overlapped
// pair's own cost, continued runs (time origin, micro-batch offset, initial versions); and the
// replay must take place where the programs repeat, or this test would not see it.

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/cost_model_executor.h"
#include "runtime/plan/sim/scheduler_core.h"
#include "tests/runtime/plan/sim/benchmark_size.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {
namespace {

struct Driven
{
    std::string outcome;
    DriveStats stats;
    std::vector<profiler::TraceEvent> events;
    std::optional<profiler::TraceRepeat> repeat;
};

Driven driveWith(const Schedule& schedule, const CostModel& costs, std::size_t appendBatch, DriveOptions options = {})
{
    CostModelExecutor executor(costs);
    profiler::TraceStore store;
    options.appendBatch = appendBatch;
    auto stats = drive(schedule, executor, store, options);
    Driven out;
    out.outcome = stats ? "ok" : stats.error().describe();
    if (stats) {
        out.stats = *stats;
    }
    const auto snapshot = store.snapshot();
    out.events = snapshot->toVector();
    out.repeat = snapshot->repeat();
    return out;
}

// The trace's own word on where it repeats (TraceRepeat, which the analysis trusts to take the
// copies in one step) is true of every copy, field for field, and covers every replayed action.
void expectRepeatHolds(const Driven& driven, std::size_t actionsPerBatch)
{
    if (driven.stats.replayed == 0) {
        EXPECT_FALSE(driven.repeat);
        return;
    }
    ASSERT_TRUE(driven.repeat);
    const profiler::TraceRepeat& r = *driven.repeat;
    ASSERT_TRUE(r.fits(driven.events.size()));
    EXPECT_EQ(r.copies * actionsPerBatch, driven.stats.replayed);
    for (std::size_t k = 1; k <= r.copies; ++k) {
        const auto times = static_cast<TimeNs>(k);
        const auto n = static_cast<std::int32_t>(k);
        for (std::size_t i = 0; i < r.length; ++i) {
            const auto& e = driven.events[r.first + i];
            const auto& c = driven.events[r.begin(k) + i];
            const std::int32_t up = e.kind == profiler::EventKind::Update ? r.updates : r.microbatches;
            ASSERT_TRUE(c.start == e.start + times * r.shift && c.end == e.end + times * r.shift
                && c.microbatch == e.microbatch + n * up && c.version == e.version + n * r.updates && c.stage == e.stage
                && c.kind == e.kind && c.lane == e.lane && c.aux == e.aux && c.bytes == e.bytes)
                << "copy " << k << ", event " << i;
        }
    }
}

void expectSameTrace(const Driven& replayed, const Driven& stepped)
{
    ASSERT_EQ(replayed.outcome, stepped.outcome);
    EXPECT_EQ(replayed.stats.makespan, stepped.stats.makespan);
    EXPECT_EQ(replayed.stats.actions, stepped.stats.actions);
    EXPECT_EQ(replayed.stats.finalVersions, stepped.stats.finalVersions);
    ASSERT_EQ(replayed.events.size(), stepped.events.size());
    for (std::size_t i = 0; i < replayed.events.size(); ++i) {
        const auto& x = replayed.events[i];
        const auto& y = stepped.events[i];
        ASSERT_TRUE(x.start == y.start && x.end == y.end && x.stage == y.stage && x.kind == y.kind && x.lane == y.lane
            && x.microbatch == y.microbatch && x.version == y.version && x.aux == y.aux && x.bytes == y.bytes)
            << "event " << i << " of " << replayed.events.size() << ": [" << x.start << ", " << x.end << ") mb "
            << x.microbatch << " v" << x.version << " vs [" << y.start << ", " << y.end << ") mb " << y.microbatch
            << " v" << y.version;
    }
}

CostModel unevenWithComm(int stages)
{
    CostModel costs = CostModel::uniform(stages, 1'000'000, 900'000, 700'000, 50'000, 120'000);
    for (int s = 0; s < stages; ++s) {
        auto& cost = costs.stages[static_cast<std::size_t>(s)];
        cost.forward += 37'000 * (s % 3);
        cost.backwardWeight += 11'000 * (s % 2);
        cost.sendBytes = 4'096;
    }
    costs.stages.front().forwardBackward = 1'500'000; // DualPipeV's pair: its own cost
    return costs;
}

TEST(PeriodicReplay, TraceEqualsTheOneDrivenActionByActionForEverySchedule)
{
    std::size_t schedulesReplayed = 0;
    for (const auto& info : scheduleCatalogue()) {
        for (int p : {2, 4}) {
            for (int m : {4, 8}) {
                ScheduleParams params{.name = info.name, .stages = p, .microbatches = m, .batches = 9};
                params.accum = info.takesAccumWindow() ? 2 : 0;
                auto schedule = makeSchedule(params);
                if (!schedule) {
                    continue; // a limit of this schedule (m a multiple of p, m >= 2p, ...)
                }
                SCOPED_TRACE(info.name + " p=" + std::to_string(p) + " m=" + std::to_string(m));
                for (const CostModel& costs :
                    {CostModel::uniform(schedule->stages(), 1'000, 1'000, 1'000), unevenWithComm(schedule->stages())}) {
                    const Driven replayed = driveWith(*schedule, costs, 1'024);
                    const Driven stepped = driveWith(*schedule, costs, 1);
                    expectSameTrace(replayed, stepped);
                    EXPECT_EQ(stepped.stats.replayed, 0u);
                    expectRepeatHolds(replayed, schedule->actionCount() / 9);
                    expectRepeatHolds(stepped, schedule->actionCount() / 9);
                    if (replayed.stats.replayed > 0) {
                        ++schedulesReplayed;
                    }
                }
            }
        }
    }
    // The flush schedules repeat from their second batch on; a test that never saw a replay would
    // prove nothing about it.
    EXPECT_GE(schedulesReplayed, scheduleCatalogue().size());
}

TEST(PeriodicReplay, EveryScheduleOfTheCatalogueIsReplayedAtTheBenchmarksSize)
{
    for (const auto& info : scheduleCatalogue()) {
        SCOPED_TRACE(info.name);
        auto schedule = test::benchmarkSchedule(info, 20);
        ASSERT_TRUE(schedule) << schedule.error().describe();
        // The benchmark's uniform costs: every schedule settles into a steady state that repeats
        // batch after batch. Uneven stages: the flush schedules still do (each batch starts from
        // the same drained pipeline); an asynchronous one may not within 20 batches (its stages
        // drift against each other until the slowest sets the pace), and is then driven whole.
        const CostModel uniform = test::benchmarkCosts(*schedule);
        const CostModel uneven = unevenWithComm(schedule->stages());
        for (const CostModel* costs : {&uniform, &uneven}) {
            const Driven replayed = driveWith(*schedule, *costs, 1'024);
            expectSameTrace(replayed, driveWith(*schedule, *costs, 1));
            expectRepeatHolds(replayed, schedule->actionCount() / 20);
            if (costs == &uniform || !schedule->asynchronous) {
                // All but the batches before the steady state is found, and the drain.
                EXPECT_GE(replayed.stats.replayed, replayed.stats.actions / 2)
                    << (costs == &uniform ? "uniform" : "uneven");
            }
        }
    }
}

TEST(PeriodicReplay, AContinuedRunIsReplayedFromWhereItStands)
{
    auto schedule = makeSchedule({.name = "zb-v", .stages = 4, .microbatches = 8, .batches = 12});
    ASSERT_TRUE(schedule);
    DriveOptions options;
    options.timeOrigin = 123'456'789;
    options.microbatchOffset = 960;
    options.initialVersions = std::vector<int>(static_cast<std::size_t>(schedule->stages()), 7);
    const CostModel costs = unevenWithComm(schedule->stages());
    const Driven replayed = driveWith(*schedule, costs, 1'024, options);
    EXPECT_GT(replayed.stats.replayed, 0u);
    expectSameTrace(replayed, driveWith(*schedule, costs, 1, options));
    expectRepeatHolds(replayed, schedule->actionCount() / 12);
}

// What the replay cannot vouch for is driven action by action: a cost model with cold-start
// extras (an action's duration then depends on what ran before), a watcher per action, a stop.
TEST(PeriodicReplay, NotWhereAnActionsOutcomeDependsOnMoreThanTheAction)
{
    auto schedule = makeSchedule({.name = "1f1b", .stages = 4, .microbatches = 8, .batches = 12});
    ASSERT_TRUE(schedule);
    CostModel cold = CostModel::uniform(4, 1'000, 1'000, 1'000);
    cold.stages[2].cold.forward = 5'000;
    const Driven coldRun = driveWith(*schedule, cold, 1'024);
    EXPECT_EQ(coldRun.stats.replayed, 0u);
    expectSameTrace(coldRun, driveWith(*schedule, cold, 1));

    const CostModel plain = CostModel::uniform(4, 1'000, 1'000, 1'000);
    DriveOptions watched;
    std::size_t seen = 0;
    watched.onAction = [&](const Action&, const profiler::TraceEvent&) { ++seen; };
    const Driven watchedRun = driveWith(*schedule, plain, 1'024, watched);
    EXPECT_EQ(watchedRun.stats.replayed, 0u);
    EXPECT_EQ(seen, schedule->actionCount());
    std::atomic<bool> never{false};
    DriveOptions stoppable;
    stoppable.stop = &never;
    EXPECT_EQ(driveWith(*schedule, plain, 1'024, stoppable).stats.replayed, 0u);
    EXPECT_GT(driveWith(*schedule, plain, 1'024).stats.replayed, 0u);
}

// A program that stops repeating (here: one action of a late batch swapped with its neighbour)
// is replayed only up to there, and driven action by action from there on.
TEST(PeriodicReplay, StopsWhereAProgramStopsRepeating)
{
    auto schedule = makeSchedule({.name = "gpipe", .stages = 4, .microbatches = 8, .batches = 12});
    ASSERT_TRUE(schedule);
    auto& program = schedule->programs[2];
    const std::size_t late = program.size() / 12 * 9 + 3; // batch 9, among its forwards
    std::swap(program[late], program[late + 1]);
    const CostModel costs = unevenWithComm(4);
    const Driven replayed = driveWith(*schedule, costs, 1'024);
    EXPECT_GT(replayed.stats.replayed, 0u);
    EXPECT_LT(replayed.stats.replayed, schedule->actionCount() * 9 / 12);
    expectSameTrace(replayed, driveWith(*schedule, costs, 1));
}

// Programs that repeat to the end but run past the micro-batches the schedule has (every id 4
// too high: the last batch names 36..39 of 0..35): the replay stops short of the actions it may
// not index by, and the drive refuses the first of them as it does action by action.
TEST(PeriodicReplay, NeverSkipsPastAMicrobatchTheScheduleDoesNotHave)
{
    auto schedule = makeSchedule({.name = "gpipe", .stages = 2, .microbatches = 4, .batches = 9});
    ASSERT_TRUE(schedule);
    for (auto& program : schedule->programs) {
        for (Action& a : program) {
            if (a.kind == ActionKind::Update) {
                a.firstMb += 4;
                a.lastMb += 4;
            } else {
                a.microbatch += 4;
            }
        }
    }
    const CostModel costs = CostModel::uniform(2, 1'000, 1'000, 1'000, 0, 100);
    const Driven replayed = driveWith(*schedule, costs, 1'024);
    EXPECT_NE(replayed.outcome.find("names a stage this rank does not hold or a micro-batch outside 0..35"),
        std::string::npos)
        << replayed.outcome;
    expectSameTrace(replayed, driveWith(*schedule, costs, 1));
}

} // namespace
} // namespace bs::runtime
