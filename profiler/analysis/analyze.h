#pragma once

#include "profiler/analysis/report.h"
#include "profiler/trace/trace_store.h"

#include <vector>

namespace bs::profiler {

/// Bubble attribution, in-flight, memory and version lag from a trace. Only compute-lane events
/// count as busy time. Deterministic; O(events · log events).
Report analyze(const TraceSnapshot& trace, const AnalysisOptions& options);

/// One idle span of a stage's compute lane and why it happened.
struct BubbleSpan
{
    TimeNs start = 0;
    TimeNs end = 0;
    int stage = 0;
    BubbleCause cause = BubbleCause::Dependency;
};

/// Every idle span analyze() attributes, per stage in time order (stages in order): the spans of
/// one cause on one stage add up to that StageReport's idleByCause exactly. The timeline tints
/// its bubbles from these, so the picture and the figures cannot disagree.
std::vector<BubbleSpan> bubbleSpans(const TraceSnapshot& trace, const AnalysisOptions& options);

} // namespace bs::profiler
