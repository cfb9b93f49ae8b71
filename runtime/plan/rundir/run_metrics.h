#pragma once
// What a training run reports: one BatchMetrics per global batch (metrics.jsonl) and a
// RunSummary at the end (summary.json, `train --json`), each with its per-stage StageMetrics
// (runtime/plan/common/stage_metrics.h). Plain values, no torch.

#include "runtime/plan/common/noise_scale.h"
#include "runtime/plan/common/stage_metrics.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

/// Multi-stage ranks (interleaved and V placements): one rank's memory over all its stages,
/// measured as one sum (its peak is the highest the sum reached, MemoryTracker::rank()).
struct RankMemory
{
    int rank = 0;
    std::vector<int> stages; ///< the model stages it holds
    std::int64_t peakBytes = 0;
    std::int64_t peakActivationBytes = 0;
};

struct BatchMetrics
{
    int step = 0; ///< global batch index, 0-based
    double trainLoss = 0.0; ///< mean over the batch's micro-batches
    std::optional<double> valLoss;
    double virtualTimeS = 0.0; ///< when the last stage applied the update covering this batch (virtual)
    /// Training wall time so far (validation excluded); the runtime always records it, a run
    /// directory written without wall_time_s reads as nullopt (no wall clock to plot against).
    std::optional<double> wallTimeS;
    double tokensPerSVirtual = 0.0;
    double tokensPerSWall = 0.0;
    std::vector<StageMetrics> stages;
    /// The gradient noise scale as measured so far (smoothed; "noise"); absent before any stage
    /// has completed an update, and in runs written before it was measured.
    std::optional<NoiseScaleEstimate> noise;

    bool operator==(const BatchMetrics&) const = default;
};

/// The partition a run used (runtime/plan/partition/partition_choice.h), as summary.json records it.
struct PartitionRecord
{
    std::string mode; ///< pipeline.partition: "flops", "measured", "explicit"
    std::string costs; ///< what the prediction used: "measured" (profiling pass) or "flops"
    std::vector<int> unitsPerStage; ///< layer units (embedding, blocks, final norm, head) per stage
    std::vector<int> layersPerStage; ///< blocks per stage
    std::vector<double> predictedStageMs; ///< forward + backward per micro-batch
    std::vector<std::int64_t> predictedStageBytes; ///< static + in-flight activations
    double predictedImbalance = 1.0; ///< slowest / mean predicted stage time

    bool operator==(const PartitionRecord&) const = default;
};

struct RunSummary
{
    std::string schedule;
    bool reference = false;
    int steps = 0;
    std::vector<double> losses; ///< per global batch
    std::vector<double> valLosses;
    std::vector<int> valSteps;
    std::vector<double> valVirtualTimesS; ///< virtual time of each validation point
    std::optional<double> finalTrainLoss;
    std::optional<double> valLoss; ///< the last one measured
    double virtualTimeS = 0.0;
    double wallTimeS = 0.0;
    double tokensPerSVirtual = 0.0;
    double tokensPerSWall = 0.0;
    double bubbleFraction = 0.0; ///< profiler::analyze()'s bubble fraction of the run's trace
    /// GPU runs with kernel lanes: the same from GPU activity (gpuBubbleFraction(), gpu_trace.h).
    std::optional<double> gpuBubbleFraction;
    double busyTimeS = 0.0; ///< sum of measured action durations
    std::optional<double> targetLoss;
    std::optional<double> timeToTargetS; ///< virtual time when the validation loss first reached the target
    std::optional<int> stepToTarget;
    std::string error; ///< non-empty when the run stopped on an error
    /// "SIGTERM" / "SIGINT" when a signal stopped the run (summary.json `stopped`, as `launch`
    /// writes it); empty for a run that ended by itself. Its figures are the batches it finished.
    std::string stopped;
    std::string device; ///< where the stages ran: "cpu", "cuda:0 (8 stages)", ...
    std::string dtype; ///< "fp32" or "bf16"
    std::vector<std::string> notes; ///< said once: e.g. why CUPTI kernel lanes are off
    /// GPU runs: the trace's cupti.* attributes (kernels, dropped_records, host_overhead_ns, ...).
    std::map<std::string, std::string> kernelProfiling;
    std::vector<StageMetrics> stages;
    std::vector<RankMemory> ranks; ///< multi-stage ranks only ("per_rank"); empty = one stage per rank
    int checkpoints = 0; ///< checkpoints this session wrote
    double checkpointWallS = 0.0; ///< wall time they took, in all (not in wall_time_s' training time)
    std::int64_t checkpointBytes = 0; ///< size of the last one (every file of checkpoint/)
    std::optional<PartitionRecord> partition; ///< pipeline runs: the stages' layer units
    std::optional<NoiseScaleEstimate> noiseScale; ///< at the run's end ("noise_scale"); as BatchMetrics::noise
};

// Each type's writer and its reader (run_loader.h), side by side as in run_metrics.cpp. The
// readers expect records readRunDir() has checked (types and ranges, run_dir_schema.h): absent or
// null fields read as their defaults, null losses as NaN; a field of another type throws
// nlohmann::json::type_error (loadRun catches it).

/// per_stage[] entries: stage, version, peak_memory_bytes, memory_bytes{params, grads, optimizer,
/// stash, activations}, peak_*_bytes, max_version_lag, version_lag_histogram, drift_samples,
/// mean_drift, max_drift; recomputes, recomputes_on_newer_weights, max_recompute_lag when recomputing.
void to_json(nlohmann::json& j, const StageMetrics& m);
void from_json(const nlohmann::json& j, StageMetrics& m);
/// metrics.jsonl's "noise" and summary.json's "noise_scale": grad_sq_norm, trace_sigma, b_simple
/// (null where not defined: reads back as NaN), b_small, b_big, updates, per_stage[] of the same
/// keys with `stage`.
void to_json(nlohmann::json& j, const StageNoiseScale& n);
void from_json(const nlohmann::json& j, StageNoiseScale& n);
void to_json(nlohmann::json& j, const NoiseScaleEstimate& n);
void from_json(const nlohmann::json& j, NoiseScaleEstimate& n);
/// One metrics.jsonl line.
void to_json(nlohmann::json& j, const BatchMetrics& m);
void from_json(const nlohmann::json& j, BatchMetrics& m);
/// summary.json's per_rank[] entries (multi-stage ranks): rank, stages, peak_memory_bytes,
/// peak_activation_bytes.
void to_json(nlohmann::json& j, const RankMemory& r);
void from_json(const nlohmann::json& j, RankMemory& r);
/// summary.json's `partition` object (units_per_stage, layers_per_stage, predicted_stage_ms, ...).
void to_json(nlohmann::json& j, const PartitionRecord& p);
void from_json(const nlohmann::json& j, PartitionRecord& p);
/// Keys: final_train_loss, losses, val_loss, virtual_time_s, wall_time_s, tokens_per_s_virtual,
/// bubble_fraction, per_stage[], noise_scale, and more.
void to_json(nlohmann::json& j, const RunSummary& s);
void from_json(const nlohmann::json& j, RunSummary& s);

} // namespace bs::runtime
