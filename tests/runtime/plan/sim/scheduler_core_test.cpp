#include "runtime/plan/sim/scheduler_core.h"

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/cost_model_executor.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

constexpr TimeNs kF = 1000;

TEST(SchedulerCore, ExecutesEachStageInItsProgramOrder)
{
    auto schedule = makeSchedule({.name = "zb-h1", .stages = 4, .microbatches = 8, .batches = 2});
    ASSERT_TRUE(schedule);
    CostModelExecutor executor(CostModel::uniform(4, 3 * kF, 2 * kF, kF));
    profiler::TraceStore store;
    auto stats = drive(*schedule, executor, store);
    ASSERT_TRUE(stats) << stats.error().describe();
    std::vector<std::vector<std::pair<profiler::EventKind, int>>> seen(4);
    store.snapshot()->forEach([&](const profiler::TraceEvent& e) {
        if (e.isCompute()) {
            seen[e.stage].emplace_back(e.kind, e.microbatch);
        }
    });
    for (int s = 0; s < 4; ++s) {
        const auto& program = schedule->programs[static_cast<std::size_t>(s)];
        ASSERT_EQ(seen[static_cast<std::size_t>(s)].size(), program.size());
        for (std::size_t i = 0; i < program.size(); ++i) {
            EXPECT_EQ(seen[static_cast<std::size_t>(s)][i].first, toEventKind(program[i].kind));
            EXPECT_EQ(seen[static_cast<std::size_t>(s)][i].second, program[i].microbatch);
        }
    }
    EXPECT_EQ(stats->finalVersions, std::vector<int>(4, 2)); // one update per batch per stage
}

TEST(SchedulerCore, GpipeMakespanWithCommIsExact)
{
    // Forwards reach the last stage after (p−1)(F+c); m forwards and m backwards run back to back;
    // the last gradient needs (p−1)(B+c) to get home.
    const int p = 4, m = 6;
    const TimeNs c = 250;
    auto schedule = makeSchedule({.name = "gpipe", .stages = p, .microbatches = m});
    ASSERT_TRUE(schedule);
    CostModelExecutor executor(CostModel::uniform(p, kF, kF, kF, 0, c));
    profiler::TraceStore store;
    auto stats = drive(*schedule, executor, store);
    ASSERT_TRUE(stats);
    EXPECT_EQ(stats->makespan, (p - 1) * (kF + c) + m * kF + m * 2 * kF + (p - 1) * (2 * kF + c));
    std::size_t sends = 0;
    store.snapshot()->forEach([&](const profiler::TraceEvent& e) {
        if (e.kind == profiler::EventKind::Send) {
            ++sends;
            EXPECT_EQ(e.duration(), c);
            EXPECT_EQ(e.lane, profiler::Lane::Comm);
        }
    });
    EXPECT_EQ(sends, static_cast<std::size_t>(2 * (p - 1) * m)); // one per activation and per gradient
}

TEST(SchedulerCore, StopsBetweenActionsAndKeepsWhatWasRecorded)
{
    auto schedule = makeSchedule({.name = "paci", .stages = 4, .microbatches = 4, .batches = 10});
    ASSERT_TRUE(schedule);
    CostModelExecutor executor(CostModel::uniform(4, kF, kF, kF));
    profiler::TraceStore store;
    std::atomic<bool> stop{false};
    DriveOptions options;
    options.stop = &stop;
    options.onAction = [&](const Action&, const profiler::TraceEvent&) {
        if (store.size() == 17) {
            stop = true;
        }
    };
    auto stats = drive(*schedule, executor, store, options);
    ASSERT_FALSE(stats);
    EXPECT_EQ(stats.error().code, ErrorCode::Cancelled);
    EXPECT_EQ(store.size(), 17u);
}

TEST(SchedulerCore, ReportsDeadlockInsteadOfSpinning)
{
    Schedule s;
    s.params = {.name = "custom", .stages = 2, .microbatches = 2};
    s.programs = {{forward(0, 0), backward(0, 0), forward(0, 1), backward(0, 1)},
        {forward(1, 0), forward(1, 1), backward(1, 0), backward(1, 1)}};
    CostModelExecutor executor(CostModel::uniform(2, kF, kF, kF));
    profiler::TraceStore store;
    auto stats = drive(s, executor, store);
    ASSERT_FALSE(stats);
    EXPECT_EQ(stats.error().code, ErrorCode::Deadlock);
    EXPECT_NE(stats.error().context.find("0B0"), std::string::npos) << stats.error().context;
}

// The scheduler core checks each action's stage and micro-batch before it indexes by them (no
// walk of the programs first): a schedule that names one out of bounds, on any rank and at any
// step, ends the drive with checkIndices()'s error for it, after the actions that could run (the
// sanitizer builds would catch an access out of bounds on the way).
TEST(SchedulerCore, RefusesActionsNamingStagesOrMicrobatchesOutOfBounds)
{
    const auto legal = [] {
        Schedule s;
        s.params = {.name = "custom", .stages = 2, .microbatches = 2};
        s.programs = {{forward(0, 0), forward(0, 1), backward(0, 0), backward(0, 1), update(0, 0, 0, 1)},
            {forward(1, 0), backward(1, 0), forward(1, 1), backward(1, 1), update(1, 0, 0, 1)}};
        return s;
    };
    CostModelExecutor executor(CostModel::uniform(2, kF, kF, kF));
    {
        profiler::TraceStore store;
        ASSERT_TRUE(drive(legal(), executor, store));
    }
    const auto refused = [&](const Schedule& s, const std::string& fragment, std::size_t eventsBefore) {
        profiler::TraceStore store;
        auto stats = drive(s, executor, store);
        ASSERT_FALSE(stats) << fragment;
        EXPECT_EQ(stats.error().code, ErrorCode::InvalidArgument);
        EXPECT_NE(stats.error().message.find(fragment), std::string::npos) << stats.error().message;
        EXPECT_EQ(store.size(), eventsBefore) << fragment;
    };
    Schedule pastTheEnd = legal();
    pastTheEnd.programs[1][2] = forward(1, 2); // m = 2: micro-batches 0..1
    refused(pastTheEnd, "rank 1, step 2 (1F2) names a stage this rank does not hold or a micro-batch outside 0..1", 5);
    Schedule negative = legal();
    negative.programs[0][0] = forward(0, -1);
    refused(negative, "rank 0, step 0", 0);
    Schedule otherRank = legal();
    otherRank.programs[0][1] = forward(1, 1); // stage 1 is rank 1's
    refused(otherRank, "rank 0, step 1", 3);
    Schedule stageBeyond = legal();
    stageBeyond.programs[1][4] = update(7, 0, 0, 1);
    refused(stageBeyond, "rank 1, step 4", 9);
    Schedule pairHalf = legal();
    pairHalf.programs[0][2] = overlapForwardBackward(0, 0, 0, 7);
    refused(pairHalf, "rank 0, step 2", 7);
    Schedule placedNowhere = legal();
    placedNowhere.rankOfStage = {0, 5};
    refused(placedNowhere, "placed on rank 5", 0);
}

// An executor whose action fails: the error reaches the caller with the action named.
class FailingExecutor final : public ActionExecutor
{
public:
    Result<ActionOutcome> perform(const Action& a) override
    {
        if (a.kind == ActionKind::Backward && a.microbatch == 1) {
            return makeError(ErrorCode::Diverged, "loss is NaN");
        }
        return ActionOutcome{kF, 0, 0};
    }
    TimeNs commTime(int, int, std::int64_t) const override { return 0; }
};

TEST(SchedulerCore, ExecutorErrorsNameStageAndAction)
{
    auto schedule = makeSchedule({.name = "1f1b", .stages = 2, .microbatches = 4});
    ASSERT_TRUE(schedule);
    FailingExecutor executor;
    profiler::TraceStore store;
    auto stats = drive(*schedule, executor, store);
    ASSERT_FALSE(stats);
    EXPECT_EQ(stats.error().code, ErrorCode::Diverged);
    EXPECT_NE(stats.error().context.find("B1"), std::string::npos) << stats.error().context;
}

// simulate() hands events to the store in batches: the trace must be the one the one-by-one
// driver writes, event for event, also when the run ends early (a failed action keeps what was
// recorded before it, on every path out of drive()).
TEST(SchedulerCore, BatchedAppendsRecordTheSameTrace)
{
    auto schedule = makeSchedule({.name = "interleaved-1f1b", .stages = 3, .microbatches = 6, .batches = 3});
    ASSERT_TRUE(schedule);
    const auto run = [&](ActionExecutor& executor, std::size_t batch) {
        profiler::TraceStore store;
        DriveOptions options;
        options.appendBatch = batch;
        auto stats = drive(*schedule, executor, store, options);
        return std::make_pair(stats ? std::string("ok") : stats.error().describe(), store.snapshot()->toVector());
    };
    const auto same = [](const auto& a, const auto& b) {
        ASSERT_EQ(a.first, b.first);
        ASSERT_EQ(a.second.size(), b.second.size());
        for (std::size_t i = 0; i < a.second.size(); ++i) {
            const auto& x = a.second[i];
            const auto& y = b.second[i];
            EXPECT_TRUE(x.start == y.start && x.end == y.end && x.stage == y.stage && x.kind == y.kind
                && x.lane == y.lane && x.microbatch == y.microbatch && x.version == y.version && x.aux == y.aux
                && x.bytes == y.bytes)
                << "event " << i;
        }
    };
    CostModelExecutor costs(CostModel::uniform(6, kF, kF, kF, kF / 2, kF / 10)); // v = 2: six stages
    const auto whole = run(costs, 1);
    EXPECT_EQ(whole.first, "ok");
    for (std::size_t batch : {std::size_t{2}, std::size_t{7}, std::size_t{1024}}) {
        same(run(costs, batch), whole);
    }
    FailingExecutor failing;
    const auto failed = run(failing, 1);
    EXPECT_NE(failed.first, "ok");
    EXPECT_FALSE(failed.second.empty());
    same(run(failing, 1024), failed);
}

} // namespace
} // namespace bs::runtime
