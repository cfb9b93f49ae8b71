#pragma once

#include "profiler/analysis/report.h"
#include "profiler/trace/trace_store.h"

#include <vector>

namespace bs::profiler {

/// Bubble attribution, in-flight, memory and version lag from a trace, and every idle span it
/// attributed (Report::bubbles: the timeline paints these, so a trace is analysed once and the
/// picture and the figures cannot disagree). Only compute-lane events count as busy time.
/// Deterministic. Two sequential walks of the trace, whatever the number of lanes: O(events) when
/// each lane's events are in start order (every producer here appends them so), plus a sort of
/// the lanes that are not.
Report analyze(const TraceSnapshot& trace, const AnalysisOptions& options);

/// The report's whole-pipeline fractions (bubble, utilization, span and steady bubble) from its
/// figures and per-stage reports: analyze() ends with it, and so does a report extended to more
/// batches (runtime/plan/sim/steady_state.h), so the two round alike.
void computeFractions(Report& report);

} // namespace bs::profiler
