#pragma once
// What a training run reports: one BatchMetrics per global batch (metrics.jsonl) and a
// RunSummary at the end (summary.json, `train --json`). Plain values, no torch.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

/// One stage at the moment a global batch completed. Bytes are measured (memory_tracker.h).
struct StageMetrics
{
    int stage = 0;
    int version = 0;
    std::int64_t paramBytes = 0; ///< live now
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
    std::vector<std::int64_t> lagHistogram;
    std::int64_t driftSamples = 0;
    double meanDrift = 0.0; ///< sampled ‖θ_B − θ_F‖/‖θ_F‖ (every (updateEvery+1)-th micro-batch)
    double maxDrift = 0.0;
    /// model.recompute: forwards recomputed in a backward, how many on newer weights than their
    /// forward's (PACI's in-place updates), and the most versions between forward and recompute.
    std::int64_t recomputes = 0;
    std::int64_t recomputesOnNewerWeights = 0;
    int maxRecomputeLag = 0;
};

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
    double wallTimeS = 0.0; ///< training wall time so far (validation excluded)
    double tokensPerSVirtual = 0.0;
    double tokensPerSWall = 0.0;
    std::vector<StageMetrics> stages;
};

/// The partition a run used (runtime/partition/partition_choice.h), as summary.json records it.
struct PartitionRecord
{
    std::string mode; ///< pipeline.partition: "flops", "measured", "explicit"
    std::string costs; ///< what the prediction used: "measured" (profiling pass) or "flops"
    std::vector<int> unitsPerStage; ///< layer units (embedding, blocks, final norm, head) per stage
    std::vector<int> layersPerStage; ///< blocks per stage
    std::vector<double> predictedStageMs; ///< forward + backward per micro-batch
    std::vector<std::int64_t> predictedStageBytes; ///< static + in-flight activations
    double predictedImbalance = 1.0; ///< slowest / mean predicted stage time
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
};

void to_json(nlohmann::json& j, const StageMetrics& m);
void to_json(nlohmann::json& j, const BatchMetrics& m);
/// Keys: final_train_loss, losses, val_loss, virtual_time_s, wall_time_s, tokens_per_s_virtual,
/// bubble_fraction, per_stage[] (peak_memory_bytes, max_version_lag, version_lag_histogram,
/// mean_drift, ...), and more.
void to_json(nlohmann::json& j, const RunSummary& s);

/// The readers of what to_json wrote (run_loader.h). They expect records readRunDir() has checked
/// (types and ranges, run_dir_schema.h): absent or null fields read as their defaults, null
/// losses as NaN; a field of another type throws nlohmann::json::type_error (loadRun catches it).
void from_json(const nlohmann::json& j, StageMetrics& m);
void from_json(const nlohmann::json& j, BatchMetrics& m);
void from_json(const nlohmann::json& j, RunSummary& s);

} // namespace bs::runtime
