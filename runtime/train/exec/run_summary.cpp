// The run's summary at its end (summary.json, `train --json`): totals, throughput and the bubble
// fraction of the trace, the final per-stage state.
#include "profiler/analysis/analyze.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/train/exec/session_state.h"
#include "runtime/train/exec/stage_transport.h"

namespace bs::runtime {

RunSummary RunSession::Impl::closeSummary(const profiler::TraceSnapshot& trace)
{
    const std::lock_guard<std::mutex> lock(mutex);
    const int p = reference ? 1 : config.pipeline.stages;
    // Stopped (a signal, Stop): the drive returned before adding its pass to virtualNow and
    // stepsDone, so the batches it recorded are the figures (before, a stopped run said 0 s, 0 tok/s).
    const bool cutShort = summary.steps > stepsDone;
    summary.virtualTimeS = cutShort ? recordedVirtualS : toSeconds(virtualNow);
    summary.wallTimeS = cutShort ? recordedWallS : seconds(trainWall) - seconds(evalWall);
    summary.busyTimeS = toSeconds(busy);
    const double tokens = tokensUpTo(cutShort ? summary.steps : stepsDone.load());
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
        summary.noiseScale = noiseScaleNow();
        summary.ranks.clear();
        for (int r = 0; !rankOfStage.empty() && r < config.pipeline.stages; ++r) {
            RankMemory rank;
            rank.rank = r;
            for (std::size_t st = 0; st < rankOfStage.size(); ++st) {
                if (rankOfStage[st] == r) {
                    rank.stages.push_back(static_cast<int>(st));
                }
            }
            const StageMemory books = MemoryTracker::rank(r);
            rank.peakBytes = books.peakTotal;
            rank.peakActivationBytes = books.peakOf(MemoryCategory::Activations);
            if (!options.transport || r == options.transport->rank()) { // a process measures its own rank
                summary.ranks.push_back(std::move(rank));
            }
        }
    }
    return summary;
}

} // namespace bs::runtime
