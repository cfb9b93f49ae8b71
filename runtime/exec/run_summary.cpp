// The run's summary at its end (summary.json, `train --json`): totals, throughput and the bubble
// fraction of the trace, the final per-stage state.
#include "runtime/exec/session_state.h"

#include "profiler/analysis/analyze.h"
#include "runtime/schedule/catalogue.h"

namespace bs::runtime {

RunSummary RunSession::Impl::closeSummary(const profiler::TraceSnapshot& trace)
{
    const std::lock_guard<std::mutex> lock(mutex);
    const int p = reference ? 1 : config.pipeline.stages;
    summary.virtualTimeS = toSeconds(virtualNow);
    summary.wallTimeS = seconds(trainWall) - seconds(evalWall);
    summary.busyTimeS = toSeconds(busy);
    const double tokens = tokensUpTo(stepsDone);
    summary.tokensPerSVirtual = summary.virtualTimeS > 0 ? tokens / summary.virtualTimeS : 0.0;
    summary.tokensPerSWall = summary.wallTimeS > 0 ? tokens / summary.wallTimeS : 0.0;
    // analyze()'s figure: the one the GUI, `simulate` and the timeline's tints show for this trace.
    profiler::AnalysisOptions settings = analysis;
    settings.laterSettings = analysisSegments(changes);
    summary.bubbleFraction = profiler::analyze(trace, settings).bubbleFraction;
    summary.gpuBubbleFraction = gpuBubbleFraction(trace, p, virtualNow); // from the kernel lanes, when there are some
    summary.device = device->plan().description;
    summary.dtype = device->plan().bf16 ? "bf16" : "fp32";
    if (model) { // the final state, after the last updates
        summary.stages = stageMetricsNow();
    }
    return summary;
}

} // namespace bs::runtime
