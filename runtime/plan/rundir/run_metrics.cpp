#include "runtime/plan/rundir/run_metrics.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace bs::runtime {

namespace {

// Writers and, beside each, the reader of what it wrote. readRunDir() has already checked every
// known field's type and range (run_dir_schema.h); a value that is absent or null reads as the
// default.
template<typename T>
nlohmann::json optional(const std::optional<T>& v)
{
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template<typename T>
void read(const nlohmann::json& j, const char* key, T& out)
{
    if (const auto it = j.find(key); it != j.end() && !it->is_null()) {
        out = it->get<T>();
    }
}

template<typename T>
void read(const nlohmann::json& j, const char* key, std::optional<T>& out)
{
    if (const auto it = j.find(key); it != j.end() && !it->is_null()) {
        out = it->get<T>();
    } else {
        out.reset();
    }
}

// Real numbers the writer may have turned into null (NaN or inf: a rank without the losses).
void readReal(const nlohmann::json& j, const char* key, double& out)
{
    if (const auto it = j.find(key); it != j.end()) {
        out = it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
    }
}

void readReals(const nlohmann::json& j, const char* key, std::vector<double>& out)
{
    out.clear();
    if (const auto it = j.find(key); it != j.end() && it->is_array()) {
        for (const auto& v : *it) {
            out.push_back(v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
        }
    }
}

} // namespace

void to_json(nlohmann::json& j, const StageMetrics& m)
{
    j = nlohmann::json{{"stage", m.stage}, {"version", m.version}, {"peak_memory_bytes", m.peakBytes},
        {"memory_bytes",
            {{"params", m.paramBytes}, {"grads", m.gradBytes}, {"optimizer", m.optimizerBytes}, {"stash", m.stashBytes},
                {"activations", m.activationBytes}}},
        {"peak_activation_bytes", m.peakActivationBytes}, {"peak_stash_bytes", m.peakStashBytes},
        {"peak_reserved_bytes", m.peakReservedBytes}, {"max_version_lag", m.maxLag},
        {"version_lag_histogram", m.lagHistogram}, {"drift_samples", m.driftSamples}, {"mean_drift", m.meanDrift},
        {"max_drift", m.maxDrift}};
    if (m.recomputes > 0) { // model.recompute: PACI's recompute drift
        j["recomputes"] = m.recomputes;
        j["recomputes_on_newer_weights"] = m.recomputesOnNewerWeights;
        j["max_recompute_lag"] = m.maxRecomputeLag;
    }
}

void from_json(const nlohmann::json& j, StageMetrics& m)
{
    m = StageMetrics{};
    read(j, "stage", m.stage);
    read(j, "version", m.version);
    read(j, "peak_memory_bytes", m.peakBytes);
    if (const auto it = j.find("memory_bytes"); it != j.end() && it->is_object()) {
        read(*it, "params", m.paramBytes);
        read(*it, "grads", m.gradBytes);
        read(*it, "optimizer", m.optimizerBytes);
        read(*it, "stash", m.stashBytes);
        read(*it, "activations", m.activationBytes);
    }
    read(j, "peak_activation_bytes", m.peakActivationBytes);
    read(j, "peak_stash_bytes", m.peakStashBytes);
    read(j, "peak_reserved_bytes", m.peakReservedBytes);
    read(j, "max_version_lag", m.maxLag);
    read(j, "version_lag_histogram", m.lagHistogram);
    read(j, "drift_samples", m.driftSamples);
    read(j, "mean_drift", m.meanDrift);
    read(j, "max_drift", m.maxDrift);
    read(j, "recomputes", m.recomputes);
    read(j, "recomputes_on_newer_weights", m.recomputesOnNewerWeights);
    read(j, "max_recompute_lag", m.maxRecomputeLag);
}

namespace {

void writeNoiseFigures(
    nlohmann::json& j, double gradSqNorm, double traceSigma, double bSimple, double bSmall, double bBig, int updates)
{
    j["grad_sq_norm"] = gradSqNorm;
    j["trace_sigma"] = traceSigma;
    j["b_simple"] = std::isfinite(bSimple) ? nlohmann::json(bSimple) : nlohmann::json(nullptr);
    j["b_small"] = bSmall;
    j["b_big"] = bBig;
    j["updates"] = updates;
}

template<typename T>
void readNoiseFigures(const nlohmann::json& j, T& n)
{
    readReal(j, "grad_sq_norm", n.gradSqNorm);
    readReal(j, "trace_sigma", n.traceSigma);
    n.bSimple = std::numeric_limits<double>::quiet_NaN();
    readReal(j, "b_simple", n.bSimple);
    read(j, "b_small", n.bSmall);
    read(j, "b_big", n.bBig);
    read(j, "updates", n.updates);
}

} // namespace

void to_json(nlohmann::json& j, const StageNoiseScale& n)
{
    j = nlohmann::json{{"stage", n.stage}};
    writeNoiseFigures(j, n.gradSqNorm, n.traceSigma, n.bSimple, n.bSmall, n.bBig, n.updates);
}

void from_json(const nlohmann::json& j, StageNoiseScale& n)
{
    n = StageNoiseScale{};
    read(j, "stage", n.stage);
    readNoiseFigures(j, n);
}

void to_json(nlohmann::json& j, const NoiseScaleEstimate& n)
{
    j = nlohmann::json::object();
    writeNoiseFigures(j, n.gradSqNorm, n.traceSigma, n.bSimple, n.bSmall, n.bBig, n.updates);
    j["per_stage"] = n.stages;
}

void from_json(const nlohmann::json& j, NoiseScaleEstimate& n)
{
    n = NoiseScaleEstimate{};
    readNoiseFigures(j, n);
    read(j, "per_stage", n.stages);
}

void to_json(nlohmann::json& j, const BatchMetrics& m)
{
    j = nlohmann::json{{"step", m.step}, {"train_loss", m.trainLoss}, {"val_loss", optional(m.valLoss)},
        {"virtual_time_s", m.virtualTimeS}, {"wall_time_s", optional(m.wallTimeS)},
        {"tokens_per_s_virtual", m.tokensPerSVirtual}, {"tokens_per_s_wall", m.tokensPerSWall},
        {"per_stage", m.stages}};
    if (m.noise) {
        j["noise"] = *m.noise;
    }
}

void from_json(const nlohmann::json& j, BatchMetrics& m)
{
    m = BatchMetrics{};
    read(j, "step", m.step);
    readReal(j, "train_loss", m.trainLoss);
    read(j, "val_loss", m.valLoss);
    read(j, "virtual_time_s", m.virtualTimeS);
    read(j, "wall_time_s", m.wallTimeS);
    read(j, "tokens_per_s_virtual", m.tokensPerSVirtual);
    read(j, "tokens_per_s_wall", m.tokensPerSWall);
    read(j, "per_stage", m.stages);
    read(j, "noise", m.noise);
}

void to_json(nlohmann::json& j, const RankMemory& r)
{
    j = nlohmann::json{{"rank", r.rank}, {"stages", r.stages}, {"peak_memory_bytes", r.peakBytes},
        {"peak_activation_bytes", r.peakActivationBytes}};
}

void from_json(const nlohmann::json& j, RankMemory& r)
{
    r = RankMemory{};
    read(j, "rank", r.rank);
    read(j, "stages", r.stages);
    read(j, "peak_memory_bytes", r.peakBytes);
    read(j, "peak_activation_bytes", r.peakActivationBytes);
}

void to_json(nlohmann::json& j, const PartitionRecord& p)
{
    j = nlohmann::json{{"mode", p.mode}, {"costs", p.costs}, {"units_per_stage", p.unitsPerStage},
        {"layers_per_stage", p.layersPerStage}, {"predicted_stage_ms", p.predictedStageMs},
        {"predicted_stage_bytes", p.predictedStageBytes}, {"predicted_imbalance", p.predictedImbalance}};
}

void from_json(const nlohmann::json& j, PartitionRecord& p)
{
    p = PartitionRecord{};
    read(j, "mode", p.mode);
    read(j, "costs", p.costs);
    read(j, "units_per_stage", p.unitsPerStage);
    read(j, "layers_per_stage", p.layersPerStage);
    readReals(j, "predicted_stage_ms", p.predictedStageMs);
    read(j, "predicted_stage_bytes", p.predictedStageBytes);
    read(j, "predicted_imbalance", p.predictedImbalance);
}

void to_json(nlohmann::json& j, const RunSummary& s)
{
    j = nlohmann::json{{"schedule", s.schedule}, {"reference", s.reference}, {"steps", s.steps},
        {"final_train_loss", optional(s.finalTrainLoss)}, {"losses", s.losses}, {"val_loss", optional(s.valLoss)},
        {"val_losses", s.valLosses}, {"val_steps", s.valSteps}, {"val_virtual_times_s", s.valVirtualTimesS},
        {"virtual_time_s", s.virtualTimeS}, {"wall_time_s", s.wallTimeS}, {"busy_time_s", s.busyTimeS},
        {"tokens_per_s_virtual", s.tokensPerSVirtual}, {"tokens_per_s_wall", s.tokensPerSWall},
        {"bubble_fraction", s.bubbleFraction}, {"gpu_bubble_fraction", optional(s.gpuBubbleFraction)},
        {"target_loss", optional(s.targetLoss)}, {"time_to_target_s", optional(s.timeToTargetS)},
        {"step_to_target", optional(s.stepToTarget)}, {"error", s.error}, {"device", s.device}, {"dtype", s.dtype},
        {"notes", s.notes}, {"kernel_profiling", s.kernelProfiling}, {"per_stage", s.stages}};
    if (!s.ranks.empty()) { // several stages per rank: memory per rank counts all of them
        j["per_rank"] = s.ranks;
    }
    if (s.checkpoints > 0) { // training.checkpoint_every: what this session's checkpoints cost
        j["checkpoints"] = s.checkpoints;
        j["checkpoint_wall_s"] = s.checkpointWallS;
        j["checkpoint_bytes"] = s.checkpointBytes;
    }
    if (s.partition) {
        j["partition"] = *s.partition;
    }
    if (s.noiseScale) {
        j["noise_scale"] = *s.noiseScale;
    }
    if (!s.stopped.empty()) {
        j["stopped"] = s.stopped;
    }
}

void from_json(const nlohmann::json& j, RunSummary& s)
{
    s = RunSummary{};
    read(j, "schedule", s.schedule);
    read(j, "reference", s.reference);
    read(j, "steps", s.steps);
    read(j, "final_train_loss", s.finalTrainLoss);
    readReals(j, "losses", s.losses);
    read(j, "val_loss", s.valLoss);
    readReals(j, "val_losses", s.valLosses);
    read(j, "val_steps", s.valSteps);
    readReals(j, "val_virtual_times_s", s.valVirtualTimesS);
    read(j, "virtual_time_s", s.virtualTimeS);
    read(j, "wall_time_s", s.wallTimeS);
    read(j, "busy_time_s", s.busyTimeS);
    read(j, "tokens_per_s_virtual", s.tokensPerSVirtual);
    read(j, "tokens_per_s_wall", s.tokensPerSWall);
    read(j, "stopped", s.stopped);
    read(j, "bubble_fraction", s.bubbleFraction);
    read(j, "gpu_bubble_fraction", s.gpuBubbleFraction);
    read(j, "target_loss", s.targetLoss);
    read(j, "time_to_target_s", s.timeToTargetS);
    read(j, "step_to_target", s.stepToTarget);
    read(j, "error", s.error);
    read(j, "device", s.device);
    read(j, "dtype", s.dtype);
    read(j, "notes", s.notes);
    read(j, "kernel_profiling", s.kernelProfiling);
    read(j, "per_stage", s.stages);
    read(j, "per_rank", s.ranks);
    read(j, "checkpoints", s.checkpoints);
    read(j, "checkpoint_wall_s", s.checkpointWallS);
    read(j, "checkpoint_bytes", s.checkpointBytes);
    read(j, "partition", s.partition);
    read(j, "noise_scale", s.noiseScale);
}

} // namespace bs::runtime
