#pragma once
// Weight drift as a run measured it on its own tensors, per model stage (chunk) and over the run:
// what `compare --runs`, the GUI's comparison table and the BENCHMARKS drift table show. Each model
// stage has its own accumulator (the PACI library's DriftStats), so a rank holding v chunks has v
// entries here, never one mixed over its chunks. Plain values, no torch, no json.

#include "runtime/plan/common/stage_metrics.h"

#include <cstdint>
#include <vector>

namespace bs::runtime {

struct StageDrift
{
    int stage = 0; ///< model stage (0..p·v − 1)
    int rank = 0; ///< the rank that holds it
    int chunk = 0; ///< its index among the rank's stages, in stage order (loop: stage / p)
    int maxLag = 0; ///< most updates a backward crossed there (measured)
    std::int64_t samples = 0; ///< sampled micro-batches (DriftStats::driftSamples)
    double meanDrift = 0.0; ///< ‖θ_B − θ_F‖/‖θ_F‖ over the samples
    double maxDrift = 0.0;

    bool operator==(const StageDrift&) const = default;
};

struct RunDrift
{
    std::vector<StageDrift> stages; ///< in model-stage order
    std::int64_t samples = 0; ///< all stages' samples
    double meanDrift = 0.0; ///< over every sample of every stage (sample-weighted)
    double maxDrift = 0.0; ///< the largest stage's
    int maxLag = 0; ///< the largest stage's

    /// Whether the run measured drift at all (a real run with tensors; simulated runs have none).
    bool measured() const { return samples > 0; }
    bool operator==(const RunDrift&) const = default;
};

/// The drift figures of `stages` (StageMetrics of a run's last batch or its summary, one per model
/// stage). `rankOfStage[s]` is the rank holding stage s (Schedule::rankOfStage); empty or too short
/// = one stage per rank (stage s on rank s).
RunDrift runDrift(const std::vector<StageMetrics>& stages, const std::vector<int>& rankOfStage);

} // namespace bs::runtime
