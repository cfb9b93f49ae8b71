#pragma once
// Bubble attribution from GPU activity. The analysis (profiler/analysis/analyze.h) measures idle
// time on compute-lane events; on a GPU the truth is the kernel lane. gpuComputeView() turns each
// stage's kernel-lane events into non-overlapping compute-lane busy intervals labelled with the
// action that launched them, so analyze() classifies GPU idle time by cause (warm-up, drain,
// flush, dependency, comm) exactly as it does for simulated or host-timed runs.

#include "profiler/analysis/report.h"
#include "profiler/trace/trace_store.h"

#include <vector>

namespace bs::profiler::cupti {

struct GpuBusyOptions
{
    /// Gaps shorter than this between kernels of the same action are counted as busy (launch
    /// latency between back-to-back kernels). 0: every gap on the stream is idle.
    TimeNs mergeGap = 0;
};

/// Per stage, the union of its kernel-lane intervals as compute-lane events (kind, micro-batch,
/// version from the launching action: aux holds its EventKind). Concurrent kernels are merged, so
/// no instant is counted twice; where kernels of two actions overlap, the earlier-started one
/// owns the overlap. Kernels not launched by a compute action (aux = kUntagged, or a Send/Marker
/// tag) belong to the stage's previous compute action; before any, they are skipped. Comm-lane
/// Send events are passed through so that waits covered by a transfer are attributed to comm.
/// Other events are dropped. Sorted by (stage, start).
std::vector<TraceEvent> gpuComputeView(const std::vector<TraceEvent>& events, const GpuBusyOptions& options = {});

/// analyze() over gpuComputeView(trace).
Report analyzeGpu(const TraceSnapshot& trace, const AnalysisOptions& analysis, const GpuBusyOptions& options = {});

} // namespace bs::profiler::cupti
