#include "trace_fixtures.h"

#include "tests/support/trace_events.h"

#include <vector>

namespace bs::ui::test {

using profiler::EventKind;
using profiler::Lane;
using profiler::TraceEvent;

TraceEvent traceEvent(int stage, EventKind kind, int mb, profiler::TimeNs start, profiler::TimeNs end, int version)
{
    return profiler::test::ev(stage, kind, mb, start, end, version);
}

TraceEvent sendEvent(int stage, int to, int mb, profiler::TimeNs start, profiler::TimeNs end)
{
    return profiler::test::send(stage, to, mb, start, end);
}

std::shared_ptr<const profiler::TraceSnapshot> twoStageTrace()
{
    std::vector<TraceEvent> events{
        traceEvent(0, EventKind::Forward, 0, 0, 100),
        traceEvent(1, EventKind::Forward, 0, 100, 200),
        traceEvent(0, EventKind::Forward, 1, 100, 200),
        traceEvent(1, EventKind::Backward, 0, 200, 300),
        traceEvent(1, EventKind::Forward, 1, 300, 400),
        traceEvent(0, EventKind::Backward, 0, 400, 500),
        traceEvent(1, EventKind::Backward, 1, 400, 500),
        traceEvent(1, EventKind::Update, 0, 500, 550),
        traceEvent(0, EventKind::Backward, 1, 600, 700, 1),
    };
    profiler::TraceMeta meta;
    meta.stages = 2;
    meta.title = "two-stage fixture";
    return profiler::makeSnapshot(meta, events);
}

std::shared_ptr<const profiler::TraceSnapshot> syntheticTrace(std::size_t count, int stages)
{
    profiler::TraceStore store(profiler::TraceMeta{stages, "virtual", "synthetic", {}});
    const EventKind cycle[] = {
        EventKind::Forward, EventKind::BackwardInput, EventKind::BackwardWeight, EventKind::Update};
    std::vector<profiler::TimeNs> clock(static_cast<std::size_t>(stages), 0);
    std::vector<int> mb(static_cast<std::size_t>(stages), 0);
    std::size_t produced = 0;
    std::size_t step = 0;
    while (produced < count) {
        const auto s = static_cast<std::size_t>(step % static_cast<std::size_t>(stages));
        const EventKind kind = cycle[(step / static_cast<std::size_t>(stages)) % 4];
        TraceEvent e = traceEvent(static_cast<int>(s), kind, mb[s], clock[s], clock[s] + 1000);
        store.append(e);
        ++produced;
        if (kind == EventKind::Forward && produced < count) {
            TraceEvent send = e;
            send.kind = EventKind::Send;
            send.lane = Lane::Comm;
            send.start = e.end;
            send.end = e.end + 150;
            store.append(send);
            ++produced;
        }
        clock[s] = e.end + ((step % 4 == 3) ? 200 : 0);
        if (kind == EventKind::Update) {
            ++mb[s];
        }
        ++step;
    }
    return store.snapshot();
}

std::shared_ptr<const TimelineIndex> analysedIndex(
    std::shared_ptr<const profiler::TraceSnapshot> trace, const profiler::AnalysisOptions& options)
{
    std::vector<profiler::BubbleSpan> bubbles = profiler::analyze(*trace, options).bubbles;
    return TimelineIndex::build(std::move(trace), std::move(bubbles));
}

std::shared_ptr<const TimelineIndex> analysedIndex(std::shared_ptr<const profiler::TraceSnapshot> trace)
{
    const profiler::AnalysisOptions options = analysisOptionsFromMeta(trace->meta());
    return analysedIndex(std::move(trace), options);
}

profiler::AnalysisOptions flushRule(bool synchronous, int microbatchesPerBatch)
{
    profiler::AnalysisOptions options;
    options.synchronous = synchronous;
    options.microbatchesPerBatch = microbatchesPerBatch;
    return options;
}

} // namespace bs::ui::test
