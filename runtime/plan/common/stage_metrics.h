#pragma once
// One stage's figures at the moment a global batch completed: the one per-stage type from the
// runtime to the screen. PipelineModel::stageMetrics() fills it from the memory tracker and the
// stage's accumulator (the PACI library's DriftStats, the library's own record); metrics.jsonl and
// summary.json hold it as `per_stage[]` (to_json / from_json side by side in
// runtime/plan/rundir/run_metrics.cpp); the GUI's charts and tables read these fields as they are.
// Plain values, no torch, no json.

#include <cstdint>
#include <vector>

namespace bs::runtime {

struct StageMetrics
{
    int stage = 0;
    int version = 0; ///< updates applied
    std::int64_t paramBytes = 0; ///< live now; bytes are measured (runtime/train/model/memory_tracker.h)
    std::int64_t gradBytes = 0;
    std::int64_t optimizerBytes = 0;
    std::int64_t stashBytes = 0;
    std::int64_t activationBytes = 0;
    std::int64_t peakBytes = 0; ///< highest total (all categories but instrumentation) since the run began
    std::int64_t peakActivationBytes = 0;
    std::int64_t peakStashBytes = 0;
    std::int64_t peakReservedBytes = 0; ///< CUDA stages: the device's caching-allocator reserve while the stage ran
                                        ///< (shared by the stages on it); 0 on the CPU
    int maxLag = 0; ///< most updates any micro-batch's backward crossed so far
    std::vector<std::int64_t> lagHistogram; ///< [k] = micro-batches whose backward crossed k updates
    std::int64_t driftSamples = 0;
    double meanDrift = 0.0; ///< sampled ‖θ_B − θ_F‖/‖θ_F‖ (every (updateEvery+1)-th micro-batch)
    double maxDrift = 0.0;
    /// model.recompute: forwards recomputed in a backward, how many on newer weights than their
    /// forward's (PACI's in-place updates), and the most versions between forward and recompute.
    std::int64_t recomputes = 0;
    std::int64_t recomputesOnNewerWeights = 0;
    int maxRecomputeLag = 0;

    bool operator==(const StageMetrics&) const = default;
};

} // namespace bs::runtime
