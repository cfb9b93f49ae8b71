#include "profiler/analysis/analyze.h"

#include "profiler/analysis/lane_sweep.h"

#include <algorithm>
#include <charconv>
#include <system_error>

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

// The lanes a trace's analysis has: its stages, or more where its events name more.
int laneCountOf(const TraceSnapshot& trace)
{
    return trace.extent().maxStage < 0 ? trace.meta().stages
                                       : std::max(trace.meta().stages, trace.extent().maxStage + 1);
}

} // namespace

Report analyze(const TraceSnapshot& trace, const AnalysisOptions& options)
{
    // Sizes from the trace's extent, which the store keeps as events are appended.
    const int stages = laneCountOf(trace);
    const int maxMb = std::max(0, trace.extent().maxMicrobatch);
    // Stages per lane, from the trace's own metadata (the simulator and the runtime set it; other
    // traces have one stage per lane). Readers bound it; clamped again for a hand-built meta.
    const int chunks = std::clamp(trace.meta().stagesPerLane, 1, kMaxStagesPerLane);
    const auto lanes = static_cast<std::size_t>(stages);

    // Pass 1, one walk of the trace: the time span, each lane's facts, the transfers.
    detail::FirstPassState first(options, stages, maxMb, chunks);
    trace.forEach([&](const TraceEvent& e) { first.add(e); });
    const detail::BatchSegments& batches = first.batches;
    std::vector<detail::LaneFacts>& facts = first.facts;
    detail::LeadLaneFacts& lead = first.lead;
    const detail::Transfers& transfers = first.transfers;
    detail::SweepContext context;
    context.options = &options;
    context.transfers = &transfers;
    context.t0 = first.t0;
    context.t1 = first.t1;
    Report report;
    report.stages = stages;
    if (!first.any) {
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
    std::vector<detail::LaneSweep> sweeps;
    sweeps.reserve(lanes);
    for (std::size_t s = 0; s < lanes; ++s) {
        sweeps.emplace_back(static_cast<int>(s), facts[s], context);
    }
    trace.forEach([&](const TraceEvent& e) {
        if (detail::isAnalysed(e) && e.stage < lanes && facts[e.stage].sorted()) {
            sweeps[e.stage].add(e);
        }
    });
    for (std::size_t s = 0; s < lanes; ++s) {
        if (facts[s].sorted()) {
            continue;
        }
        detail::LaneMemory& memory = first.restartMemory(s);
        for (std::size_t i : order[s]) {
            sweeps[s].add(trace[i]);
            memory.add(trace[i]);
        }
    }

    std::size_t spans = 0;
    for (const auto& sweep : sweeps) {
        spans += sweep.spanCount() + 1; // + the drain finish() adds
    }
    report.bubbles.reserve(spans);
    TimeNs steadyBusy = 0;
    for (auto& sweep : sweeps) {
        report.perStage.push_back(sweep.finish(report.makespan, report.bubbles, first.memory[report.perStage.size()]));
        const auto& st = report.perStage.back();
        report.totalIdle += st.idle;
        for (int c = 0; c < kBubbleCauseCount; ++c) {
            report.idleByCause[static_cast<std::size_t>(c)] += st.idleByCause[static_cast<std::size_t>(c)];
        }
        steadyBusy += sweep.steadyBusy();
    }
    report.microbatches = lead.forwards;
    report.steadyStart = context.t0;
    report.steadyEnd = context.t1;
    if (context.steady.end > context.steady.start) {
        report.steadyStart = context.steady.start;
        report.steadyEnd = context.steady.end;
        report.steadyBusy = steadyBusy;
    }
    computeFractions(report);
    return report;
}

void computeFractions(Report& report)
{
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
    report.steadyBubbleFraction = report.bubbleFraction;
    if (report.steadyBusy >= 0) {
        const double steadyCapacity =
            static_cast<double>(report.stages) * static_cast<double>(report.steadyEnd - report.steadyStart);
        report.steadyBubbleFraction = 1.0 - static_cast<double>(report.steadyBusy) / steadyCapacity;
    }
}

} // namespace bs::profiler
