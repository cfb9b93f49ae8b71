// The analysis takes a simulated trace's repeated copies in one step (profiler/analysis/
// periodic_leap.h): both walks check that their state repeats and that what they read of the
// whole trace is periodic over the copies, then write the state after the last copy. The report
// must be the one the same events give without the trace's word that they repeat, to the last idle
// span, for every schedule of the catalogue, uniform and uneven costs with comm; both walks must
// leap at the benchmark's size (or this test would not see a leap); and where the events after the
// copies break what the copies read, the walk must see it and take the copies event by event.

#include "profiler/analysis/periodic_leap.h"

#include "profiler/analysis/analyze.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/cost_model_executor.h"
#include "runtime/plan/sim/scheduler_core.h"
#include "runtime/plan/sim/simulator.h"
#include "tests/runtime/plan/sim/benchmark_size.h"
#include "tests/support/same_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace bs::runtime {
namespace {

using profiler::test::expectSameReport;

std::shared_ptr<const profiler::TraceSnapshot> driven(const Schedule& schedule, const CostModel& costs)
{
    profiler::TraceStore store(traceMetaFor(schedule));
    CostModelExecutor executor(costs);
    DriveOptions options;
    options.appendBatch = 1'024; // as simulate() drives: the steady state replayed
    EXPECT_TRUE(drive(schedule, executor, store, options));
    return store.snapshot();
}

// The same events without the producer's word that they repeat: walked event by event.
std::shared_ptr<const profiler::TraceSnapshot> withoutRepeat(const profiler::TraceSnapshot& trace)
{
    return profiler::makeSnapshot(trace.meta(), trace.toVector());
}

// `events` (`trace`'s, changed) stored with `trace`'s repeat: a snapshot carries it if it fits.
std::shared_ptr<const profiler::TraceSnapshot> withRepeatOf(
    const profiler::TraceSnapshot& trace, const std::vector<profiler::TraceEvent>& events)
{
    profiler::TraceStore store(trace.meta());
    for (const auto& e : events) {
        store.append(e);
    }
    store.noteRepeat(*trace.repeat());
    return store.snapshot();
}

CostModel unevenWithComm(int stages)
{
    CostModel costs = CostModel::uniform(stages, 1'000'000, 900'000, 700'000, 50'000, 120'000);
    for (int s = 0; s < stages; ++s) {
        costs.stages[static_cast<std::size_t>(s)].forward += 37'000 * (s % 3);
        costs.stages[static_cast<std::size_t>(s)].backwardWeight += 11'000 * (s % 2);
    }
    costs.stages.front().forwardBackward = 1'500'000;
    return costs;
}

struct Leaps
{
    bool first = false, second = false;
};

// Whether each walk of `trace`'s analysis leaps (what analyze() runs, taken apart).
Leaps leapsOf(const profiler::TraceSnapshot& trace, const profiler::AnalysisOptions& options, const Schedule& schedule)
{
    const auto plan = profiler::detail::leapPlanFor(trace, options, schedule.ranks());
    if (!plan) {
        return {};
    }
    profiler::detail::FirstPassState first(
        options, schedule.ranks(), std::max(0, trace.extent().maxMicrobatch), schedule.stagesPerRank());
    Leaps leaps;
    leaps.first = profiler::detail::PeriodicLeap::walkFirstPass(trace, *plan, first);
    profiler::detail::SweepContext context;
    context.options = &options;
    context.transfers = &first.transfers;
    context.t0 = first.t0;
    context.t1 = first.t1;
    context.steady = first.lead.steadyWindow(first.batches);
    std::vector<profiler::detail::LaneSweep> sweeps;
    sweeps.reserve(first.facts.size());
    for (std::size_t s = 0; s < first.facts.size(); ++s) {
        sweeps.emplace_back(static_cast<int>(s), first.facts[s], context, first.facts[s].count());
    }
    leaps.second = profiler::detail::PeriodicLeap::sweep(trace, *plan, first.transfers, sweeps);
    return leaps;
}

TEST(PeriodicLeap, ReportEqualsTheOneWalkedEventByEventForEverySchedule)
{
    std::size_t leapt = 0, cases = 0;
    for (const auto& info : scheduleCatalogue()) {
        for (int p : {2, 4, 8}) {
            for (int m : {8, 16}) {
                ScheduleParams params{.name = info.name, .stages = p, .microbatches = m, .batches = 14};
                params.accum = info.takesAccumWindow() ? 4 : 0;
                auto schedule = makeSchedule(params);
                if (!schedule) {
                    continue; // a limit of this schedule (m a multiple of p, ...)
                }
                SCOPED_TRACE(info.name + " p=" + std::to_string(p) + " m=" + std::to_string(m));
                for (const CostModel& costs : {CostModel::uniform(schedule->stages(), 1'000, 1'000, 1'000, 0, 300),
                         unevenWithComm(schedule->stages())}) {
                    const auto trace = driven(*schedule, costs);
                    const auto options = analysisOptionsFor(*schedule, &costs);
                    const auto walked = profiler::analyzeOnOneThread(*withoutRepeat(*trace), options);
                    expectSameReport(profiler::analyze(*trace, options), walked);
                    expectSameReport(profiler::analyzeOnOneThread(*trace, options), walked);
                    ++cases;
                    if (const Leaps leaps = leapsOf(*trace, options, *schedule); leaps.first && leaps.second) {
                        ++leapt;
                    }
                }
            }
        }
    }
    // Most cases repeat long enough for both walks to leap; a test that never saw one proves
    // nothing about it.
    EXPECT_GE(leapt, cases * 3 / 4) << leapt << " of " << cases;
}

TEST(PeriodicLeap, BothWalksLeapForEveryScheduleAtTheBenchmarksSize)
{
    for (const auto& info : scheduleCatalogue()) {
        SCOPED_TRACE(info.name);
        auto schedule = test::benchmarkSchedule(info, 100);
        ASSERT_TRUE(schedule) << schedule.error().describe();
        const CostModel costs = test::benchmarkCosts(*schedule);
        const auto trace = driven(*schedule, costs);
        ASSERT_TRUE(trace->repeat());
        const auto options = analysisOptionsFor(*schedule, &costs);
        EXPECT_TRUE(profiler::takesCopiesInOneStep(*trace, options));
        const Leaps leaps = leapsOf(*trace, options, *schedule);
        EXPECT_TRUE(leaps.first);
        EXPECT_TRUE(leaps.second);
        expectSameReport(profiler::analyze(*trace, options), profiler::analyze(*withoutRepeat(*trace), options));
    }
}

// A forward before the recorded period that lasts past the copies: the latest end, stage 0's
// cursor and its last end stay where it put them while the copies go by, so neither walk's state
// repeats moved, and both must walk the copies (a leap would move the makespan by the copies').
TEST(PeriodicLeap, AnEventBeforeThePeriodThatOutlastsTheCopiesStopsBothLeaps)
{
    auto schedule = makeSchedule({.name = "interleaved-1f1b", .stages = 4, .microbatches = 8, .batches = 16});
    ASSERT_TRUE(schedule);
    const CostModel costs = CostModel::uniform(schedule->stages(), 1'000, 1'000, 1'000, 0, 300);
    const auto trace = driven(*schedule, costs);
    ASSERT_TRUE(trace->repeat());
    std::vector<profiler::TraceEvent> events = trace->toVector();
    const auto early =
        std::find_if(events.begin(), events.begin() + static_cast<std::ptrdiff_t>(trace->repeat()->first),
            [](const profiler::TraceEvent& e) { return e.stage == 0 && e.kind == profiler::EventKind::Forward; });
    ASSERT_NE(early, events.begin() + static_cast<std::ptrdiff_t>(trace->repeat()->first));
    early->end = trace->endTime() - 10'000;
    const auto changed = withRepeatOf(*trace, events);
    ASSERT_TRUE(changed->repeat());
    const auto options = analysisOptionsFor(*schedule, &costs);
    const Leaps leaps = leapsOf(*changed, options, *schedule);
    EXPECT_FALSE(leaps.first);
    EXPECT_FALSE(leaps.second);
    expectSameReport(
        profiler::analyze(*changed, options), profiler::analyzeOnOneThread(*withoutRepeat(*changed), options));
}

// 1F1B on 4 stages, 8 micro-batches a batch, 16 batches, B twice F and a transfer 0.4 F: the run
// the changed-trace cases below start from (its gaps wait on transfers and flushes).
struct OneFOneB
{
    Schedule schedule = *makeSchedule({.name = "1f1b", .stages = 4, .microbatches = 8, .batches = 16});
    CostModel costs = CostModel::uniform(4, 1'000, 2'000, 0, 0, 400);
    std::shared_ptr<const profiler::TraceSnapshot> trace = driven(schedule, costs);
};

// `events` (`trace`'s, changed after its copies) with `trace`'s repeat, which still holds of
// them: pass 1 leaps and takes the change after, pass 2 must refuse to, and the report is the one
// walked event by event, which the change altered (or the case would test nothing).
void expectTheSecondWalkRefuses(const Schedule& schedule, const CostModel& costs, const profiler::TraceSnapshot& trace,
    const std::vector<profiler::TraceEvent>& events)
{
    const auto changed = withRepeatOf(trace, events);
    ASSERT_TRUE(changed->repeat());
    const auto options = analysisOptionsFor(schedule, &costs);
    const Leaps leaps = leapsOf(*changed, options, schedule);
    EXPECT_TRUE(leaps.first);
    EXPECT_FALSE(leaps.second);
    const auto walked = profiler::analyzeOnOneThread(*withoutRepeat(*changed), options);
    expectSameReport(profiler::analyze(*changed, options), walked);
    EXPECT_NE(walked.idleByCause, profiler::analyzeOnOneThread(*withoutRepeat(trace), options).idleByCause);
}

// Events after the copies that change what the copies read: a transfer into a forward of the last
// copy, written after the copies (an importer's order, say). Pass 2 must find the transfers no
// longer periodic and walk the copies (the comm share of that forward's gap changes).
TEST(PeriodicLeap, ATransferWrittenAfterTheCopiesIntoOneOfThemStopsTheSecondWalksLeap)
{
    const OneFOneB run;
    ASSERT_TRUE(run.trace->repeat());
    const profiler::TraceRepeat repeat = *run.trace->repeat();
    std::vector<profiler::TraceEvent> events = run.trace->toVector();
    // The last copy's last forward on stage 3, fed from stage 2 (a gap before it waits for that).
    const profiler::TraceEvent* late = nullptr;
    for (std::size_t i = repeat.begin(repeat.copies); i < repeat.begin(repeat.copies + 1); ++i) {
        if (events[i].stage == 3 && events[i].kind == profiler::EventKind::Forward) {
            late = &events[i];
        }
    }
    ASSERT_NE(late, nullptr);
    profiler::TraceEvent extra = *late;
    extra.kind = profiler::EventKind::Send;
    extra.lane = profiler::Lane::Comm;
    extra.stage = 2;
    extra.aux = 3;
    extra.start = late->start - 300;
    extra.end = late->start - 100;
    events.push_back(extra);
    expectTheSecondWalkRefuses(run.schedule, run.costs, *run.trace, events);
}

// Stage 1's forwards after the copies dropped: its drain now starts at its last forward in the
// last copy, so the copies' gaps after it are drain, not what copy a's were.
TEST(PeriodicLeap, ADrainThatStartsInTheCopiesStopsTheSecondWalksLeap)
{
    auto schedule = makeSchedule({.name = "zb-h1", .stages = 4, .microbatches = 8, .batches = 16});
    ASSERT_TRUE(schedule);
    const CostModel costs = CostModel::uniform(4, 1'000, 1'000, 1'000, 0, 300);
    const auto trace = driven(*schedule, costs);
    ASSERT_TRUE(trace->repeat());
    std::vector<profiler::TraceEvent> events = trace->toVector();
    const std::size_t tail = trace->repeat()->begin(trace->repeat()->copies + 1);
    std::erase_if(events, [&](const profiler::TraceEvent& e) {
        return &e - events.data() >= static_cast<std::ptrdiff_t>(tail) && e.stage == 1
            && e.kind == profiler::EventKind::Forward && e.isCompute();
    });
    expectTheSecondWalkRefuses(*schedule, costs, *trace, events);
}

// A forward of a batch in the middle of the copies written last, after every other event: that
// batch's forward span on stage 0 now ends there, and its flush window is not the others' moved.
TEST(PeriodicLeap, AFlushWindowTheCopiesDoNotRepeatStopsTheSecondWalksLeap)
{
    const OneFOneB run;
    ASSERT_TRUE(run.trace->repeat());
    const profiler::TraceRepeat repeat = *run.trace->repeat();
    std::vector<profiler::TraceEvent> events = run.trace->toVector();
    const std::size_t middle = repeat.begin(repeat.copies / 2);
    const auto forward = std::find_if(events.begin() + static_cast<std::ptrdiff_t>(middle), events.end(),
        [](const profiler::TraceEvent& e) { return e.stage == 0 && e.kind == profiler::EventKind::Forward; });
    ASSERT_NE(forward, events.end());
    profiler::TraceEvent late = *forward;
    late.start = run.trace->endTime() + 1'000;
    late.end = late.start + 1'000;
    events.push_back(late);
    expectTheSecondWalkRefuses(run.schedule, run.costs, *run.trace, events);
}

} // namespace
} // namespace bs::runtime
