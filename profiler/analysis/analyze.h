#pragma once

#include "profiler/analysis/report.h"
#include "profiler/trace/trace_store.h"

namespace bs::profiler {

/// Bubble attribution, in-flight, memory and version lag from a trace. Only compute-lane events
/// count as busy time. Deterministic; O(events · log events).
Report analyze(const TraceSnapshot& trace, const AnalysisOptions& options);

} // namespace bs::profiler
