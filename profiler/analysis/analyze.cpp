#include "profiler/analysis/analyze.h"

#include "base/huge_pages.h"
#include "profiler/analysis/first_pass.h"
#include "profiler/analysis/lane_sweep.h"
#include "profiler/analysis/periodic_leap.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <optional>
#include <system_error>
#include <thread>

namespace bs::profiler {

std::string_view bubbleCauseName(BubbleCause cause)
{
    switch (cause) {
    case BubbleCause::WarmUp: return "warm-up";
    case BubbleCause::Drain: return "drain";
    case BubbleCause::Flush: return "flush";
    case BubbleCause::Dependency: return "dependency";
    case BubbleCause::Comm: return "comm";
    }
    return "unknown";
}

namespace {

// Below this many events pass 2's walk (~5 ns an event) costs too little to split: a thread
// started and joined costs 15-50 µs (the tuner's and Suggest's many small analyses stay on one).
constexpr std::size_t kSweepInTwoEvents = 32'768;
// Below this many, pass 1 is not split by what it tracks either: each half reads every event, and
// at 48 800 events (gpipe, 1f1b, paci at N = 100) the split walk took 10-20% longer than one walk
// on a 2-vCPU VM, while at 123 200 (zb-v) it took 12% less (docs/BENCHMARKS.md, eighth step).
constexpr std::size_t kSplitFirstWalkEvents = 65'536;

// Where pass 2 splits its walk of a trace of `events` events in two (0: it does not): the resume
// point of pass 1 nearest the middle. A lane is swept from a running state that a resume point
// restores (LaneSweep::resumeAt()), so both halves are walked at once, on two threads: on the
// simulator's path this walk follows the drive, when the thread that took pass 1 beside the
// drive is done, and it was the caller's alone.
std::size_t splitPoint(std::size_t events, const detail::FirstPassState& first)
{
    const std::size_t points = first.resumePointCount();
    if (events < kSweepInTwoEvents || points == 0) {
        return 0;
    }
    constexpr std::size_t stride = detail::FirstPassState::kResumeStride;
    return std::clamp<std::size_t>(events / 2 / stride, 1, points) * stride;
}

// Runs `here` on this thread and `there` on a thread of its own, both to the end, and throws
// what either threw (out of memory, say) as one thread would. Both run here, one after the other,
// where no thread can be started.
template<typename Here, typename There>
void inTwo(Here&& here, There&& there)
{
    std::exception_ptr failed;
    std::thread beside;
    try {
        beside = std::thread([&] {
            try {
                there();
            } catch (...) {
                failed = std::current_exception();
            }
        });
    } catch (const std::system_error&) {
        here();
        there();
        return;
    }
    try {
        here();
    } catch (...) {
        beside.join(); // `there` still reads what `here` would unwind
        throw;
    }
    beside.join();
    if (failed) {
        std::rethrow_exception(failed);
    }
}

// The lanes a trace's analysis has: its stages, or more where its events name more.
int laneCountOf(const TraceSnapshot& trace)
{
    return trace.extent().maxStage < 0 ? trace.meta().stages
                                       : std::max(trace.meta().stages, trace.extent().maxStage + 1);
}

// analyze()'s body: `passed` the first walk taken as the trace was written (null: none), `mayThread`
// whether the second walk may be split over two threads.
Report analyzeWith(
    const TraceSnapshot& trace, const AnalysisOptions& options, detail::FirstPassState* passed, bool mayThread)
{
    // Sizes from the trace's extent, which the store keeps as events are appended (a walk of
    // the events here was a third read of a long trace from main memory).
    const int stages = laneCountOf(trace);
    const int maxMb = std::max(0, trace.extent().maxMicrobatch);
    // Stages per lane, from the trace's own metadata (the simulator and the runtime set it; other
    // traces have one stage per lane). Readers bound it; clamped again for a hand-built meta.
    const int chunks = std::clamp(trace.meta().stagesPerLane, 1, kMaxStagesPerLane);
    const auto lanes = static_cast<std::size_t>(stages);
    // A trace that says where it repeats (a simulation's) is walked with its copies in one step.
    const std::optional<detail::LeapPlan> leap = detail::leapPlanFor(trace, options, stages);

    // Pass 1, one walk of the trace (or the one a FirstPass took as it was written): the time
    // span, each lane's facts, the transfers.
    std::optional<detail::FirstPassState> own;
    detail::FirstPassState* first = nullptr;
    if (passed && passed->matches(options, stages, maxMb, chunks, trace.size())) {
        first = passed;
    } else {
        own.emplace(options, stages, maxMb, chunks);
        if (leap) {
            detail::PeriodicLeap::walkFirstPass(trace, *leap, *own);
        } else if (mayThread && trace.size() >= kSplitFirstWalkEvents) {
            // The lanes' memory on this thread, the rest beside: each walks every event, and the
            // two halves of the work are about equal (a split by events would leave the memory of
            // the later half waiting for the earlier's).
            inTwo([&] { trace.forEach(own->memoryWalk()); },
                [&] { trace.forEach([&](const TraceEvent& e) { own->addFacts(e); }); });
        } else {
            trace.forEach([&](const TraceEvent& e) { own->add(e); });
        }
        first = &*own;
    }
    const detail::BatchSegments& batches = first->batches;
    std::vector<detail::LaneFacts>& facts = first->facts;
    detail::LeadLaneFacts& lead = first->lead;
    const detail::Transfers& transfers = first->transfers;
    detail::SweepContext context;
    context.options = &options;
    context.transfers = &transfers;
    context.t0 = first->t0;
    context.t1 = first->t1;
    Report report;
    report.stages = stages;
    if (!first->any) {
        return report;
    }
    report.makespan = context.t1 - context.t0;

    // Lanes the trace does not hold in start order (an importer's, say) are walked through a
    // sorted index instead; producers append in start order, so this is normally empty.
    std::vector<std::vector<std::size_t>> order(lanes);
    if (std::any_of(facts.begin(), facts.end(), [](const detail::LaneFacts& f) { return !f.sorted(); })) {
        for (std::size_t i = 0; i < trace.size(); ++i) {
            if (const TraceEvent& e = trace[i]; detail::isAnalysed(e) && !facts[e.stage].sorted()) {
                order[e.stage].push_back(i);
            }
        }
        for (auto& indices : order) {
            std::stable_sort(indices.begin(), indices.end(),
                [&](std::size_t a, std::size_t b) { return trace[a].start < trace[b].start; });
        }
        if (!facts.front().sorted()) {
            lead = {};
            for (std::size_t i : order.front()) {
                lead.add(trace[i], batches);
            }
        }
    }
    context.steady = lead.steadyWindow(batches);

    // Pass 2, one more walk: every lane's gaps. Pass 1 tracked the memory and lag of the lanes
    // in start order; the others' are tracked here, from their sorted index, over fresh slots.
    // A long trace's walk is split in two at a resume point of pass 1 (splitPoint()): `sweeps`
    // take the events before it, on a second thread, `later` those after, on this one (the events
    // a producer wrote last, likeliest still in this core's cache: the split the other way round
    // took a third longer here).
    const bool allSorted =
        std::all_of(facts.begin(), facts.end(), [](const detail::LaneFacts& f) { return f.sorted(); });
    const bool sweepLeaps = leap && allSorted;
    const std::size_t split = mayThread && !sweepLeaps ? splitPoint(trace.size(), *first) : 0;
    const std::size_t resumeIndex = split / detail::FirstPassState::kResumeStride - 1; // when split != 0
    const auto eventsBefore = [&](std::size_t s) {
        return split == 0 || !facts[s].sorted() ? facts[s].count() : first->resumePoint(resumeIndex, s).events;
    };
    std::vector<detail::LaneSweep> sweeps, later;
    sweeps.reserve(lanes);
    later.reserve(split == 0 ? 0 : lanes);
    for (std::size_t s = 0; s < lanes; ++s) {
        const std::size_t before = eventsBefore(s);
        sweeps.emplace_back(static_cast<int>(s), facts[s], context, before);
        if (split != 0) {
            later.emplace_back(static_cast<int>(s), facts[s], context, facts[s].count() - before);
            if (before > 0 && facts[s].sorted()) {
                later.back().resumeAt(first->resumePoint(resumeIndex, s).cursor);
            }
        }
    }
    const auto sweepSorted = [&](std::vector<detail::LaneSweep>& into, std::size_t from, std::size_t to) {
        trace.forEachIn(from, to, [&](const TraceEvent& e) {
            if (detail::isAnalysed(e) && facts[e.stage].sorted()) {
                into[e.stage].add(e);
            }
        });
    };
    if (sweepLeaps) {
        detail::PeriodicLeap::sweep(trace, *leap, transfers, sweeps);
    } else if (split == 0) {
        sweepSorted(sweeps, 0, trace.size());
    } else {
        inTwo([&] { sweepSorted(later, split, trace.size()); }, [&] { sweepSorted(sweeps, 0, split); });
        for (std::size_t s = 0; s < lanes; ++s) {
            sweeps[s].takeOver(std::move(later[s]));
        }
    }
    for (std::size_t s = 0; s < lanes; ++s) {
        if (facts[s].sorted()) {
            continue;
        }
        detail::LaneMemory& memory = first->restartMemory(s);
        for (std::size_t i : order[s]) {
            sweeps[s].add(trace[i]);
            memory.add(trace[i]);
        }
    }

    std::size_t spans = 0;
    for (const auto& sweep : sweeps) {
        spans += sweep.spanCount() + 1; // + the drain finish() adds
    }
    reserveAdvised(report.bubbles, spans);
    TimeNs steadyBusy = 0;
    for (auto& sweep : sweeps) {
        report.perStage.push_back(sweep.finish(report.makespan, report.bubbles, first->memory[report.perStage.size()]));
        const auto& st = report.perStage.back();
        report.totalIdle += st.idle;
        for (int c = 0; c < kBubbleCauseCount; ++c) {
            report.idleByCause[static_cast<std::size_t>(c)] += st.idleByCause[static_cast<std::size_t>(c)];
        }
        steadyBusy += sweep.steadyBusy();
    }
    const double capacity = static_cast<double>(report.stages) * static_cast<double>(report.makespan);
    report.bubbleFraction = capacity > 0 ? static_cast<double>(report.totalIdle) / capacity : 0.0;
    report.utilization = 1.0 - report.bubbleFraction;
    // The zero-bubble authors' bubble rate: (cost − busy) / cost with cost the longest
    // per-stage span, so a stage's late start and early finish do not count.
    TimeNs longest = 0, busy = 0;
    for (const auto& st : report.perStage) {
        longest = std::max(longest, st.span);
        busy += st.busy;
    }
    const double meanBusy = static_cast<double>(busy) / static_cast<double>(report.stages);
    report.spanBubbleFraction = longest > 0 ? 1.0 - meanBusy / static_cast<double>(longest) : 0.0;

    report.microbatches = lead.forwards;
    report.steadyStart = context.t0;
    report.steadyEnd = context.t1;
    report.steadyBubbleFraction = report.bubbleFraction;
    if (context.steady.end > context.steady.start) {
        const double steadyCapacity =
            static_cast<double>(report.stages) * static_cast<double>(context.steady.end - context.steady.start);
        report.steadyStart = context.steady.start;
        report.steadyEnd = context.steady.end;
        report.steadyBubbleFraction = 1.0 - static_cast<double>(steadyBusy) / steadyCapacity;
    }
    return report;
}

} // namespace

Report analyze(const TraceSnapshot& trace, const AnalysisOptions& options)
{
    return analyzeWith(trace, options, nullptr, true);
}

Report analyze(const TraceSnapshot& trace, const AnalysisOptions& options, FirstPass* firstPass)
{
    return analyzeWith(trace, options, firstPass ? firstPass->m_state.get() : nullptr, true);
}

Report analyzeOnOneThread(const TraceSnapshot& trace, const AnalysisOptions& options)
{
    return analyzeWith(trace, options, nullptr, false);
}

bool takesCopiesInOneStep(const TraceSnapshot& trace, const AnalysisOptions& options)
{
    return detail::leapPlanFor(trace, options, laneCountOf(trace)).has_value();
}

} // namespace bs::profiler
