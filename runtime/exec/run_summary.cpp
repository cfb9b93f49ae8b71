// The run's summary at its end (summary.json, `train --json`): totals, throughput and the bubble
// fraction of the trace, the final per-stage state.
#include "runtime/exec/session_state.h"

#include "profiler/analysis/analyze.h"
#include "runtime/schedule/catalogue.h"

namespace bs::runtime {

RunSummary RunSession::Impl::closeSummary(const profiler::TraceSnapshot& trace)
{
    const std::lock_guard<std::mutex> lock(mutex);
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
    summary.gpuBubbleFraction = gpuBubbleFraction(trace, trace.meta().stages, virtualNow); // from the kernel lanes, when there are some
    summary.device = device->plan().description;
    summary.dtype = device->plan().bf16 ? "bf16" : "fp32";
    if (model) { // the final state, after the last updates
        summary.stages.clear();
        for (int st = 0; st < model->stages(); ++st) {
            summary.stages.push_back(stageMetrics(st, model->stageStats(st)));
        }
    }
    return summary;
}

} // namespace bs::runtime
