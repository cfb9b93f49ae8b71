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

class FirstPass;
/// The same, with the first walk already taken as the trace was written (analysis/first_pass.h);
/// null, or one that does not match this trace and these options, and it is taken here.
Report analyze(const TraceSnapshot& trace, const AnalysisOptions& options, FirstPass* firstPass);

/// The same report with every walk on the calling thread (analyze() splits each of a long trace's
/// two walks over this thread and one it starts: the first by what it tracks, the lanes' memory
/// here and the rest there, the second into two halves of the trace): for a caller that must not
/// start threads, and the reference the split walks are tested against.
Report analyzeOnOneThread(const TraceSnapshot& trace, const AnalysisOptions& options);

/// Whether analyze() would take the copies of `trace`'s repeat (TraceSnapshot::repeat()) in one
/// step, its first walk included: a FirstPass taken as such a trace was written saves nothing.
/// The report is the same either way.
bool takesCopiesInOneStep(const TraceSnapshot& trace, const AnalysisOptions& options);

} // namespace bs::profiler
