#include "runtime/exec/run_metrics.h"

#include <nlohmann/json.hpp>

namespace bs::runtime {

namespace {
template<typename T>
nlohmann::json optional(const std::optional<T>& v)
{
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
} // namespace

void to_json(nlohmann::json& j, const StageMetrics& m)
{
    j = nlohmann::json{{"stage", m.stage}, {"version", m.version}, {"peak_memory_bytes", m.peakBytes},
        {"memory_bytes",
            {{"params", m.paramBytes}, {"grads", m.gradBytes}, {"optimizer", m.optimizerBytes}, {"stash", m.stashBytes},
                {"activations", m.activationBytes}}},
        {"peak_activation_bytes", m.peakActivationBytes}, {"peak_stash_bytes", m.peakStashBytes}, {"peak_reserved_bytes", m.peakReservedBytes},
        {"max_version_lag", m.maxLag}, {"version_lag_histogram", m.lagHistogram}, {"drift_samples", m.driftSamples},
        {"mean_drift", m.meanDrift}, {"max_drift", m.maxDrift}};
}

void to_json(nlohmann::json& j, const BatchMetrics& m)
{
    j = nlohmann::json{{"step", m.step}, {"train_loss", m.trainLoss}, {"val_loss", optional(m.valLoss)},
        {"virtual_time_s", m.virtualTimeS}, {"wall_time_s", m.wallTimeS}, {"tokens_per_s_virtual", m.tokensPerSVirtual},
        {"tokens_per_s_wall", m.tokensPerSWall}, {"per_stage", m.stages}};
}

void to_json(nlohmann::json& j, const RunSummary& s)
{
    j = nlohmann::json{{"schedule", s.schedule}, {"reference", s.reference}, {"steps", s.steps},
        {"final_train_loss", optional(s.finalTrainLoss)}, {"losses", s.losses}, {"val_loss", optional(s.valLoss)},
        {"val_losses", s.valLosses}, {"val_steps", s.valSteps}, {"val_virtual_times_s", s.valVirtualTimesS},
        {"virtual_time_s", s.virtualTimeS}, {"wall_time_s", s.wallTimeS}, {"busy_time_s", s.busyTimeS},
        {"tokens_per_s_virtual", s.tokensPerSVirtual}, {"tokens_per_s_wall", s.tokensPerSWall},
        {"bubble_fraction", s.bubbleFraction}, {"gpu_bubble_fraction", optional(s.gpuBubbleFraction)}, {"target_loss", optional(s.targetLoss)},
        {"time_to_target_s", optional(s.timeToTargetS)}, {"step_to_target", optional(s.stepToTarget)},
        {"error", s.error}, {"device", s.device}, {"dtype", s.dtype}, {"notes", s.notes},
        {"kernel_profiling", s.kernelProfiling}, {"per_stage", s.stages}};
    if (s.partition) {
        const PartitionRecord& p = *s.partition;
        j["partition"] = {{"mode", p.mode}, {"costs", p.costs}, {"units_per_stage", p.unitsPerStage},
            {"layers_per_stage", p.layersPerStage}, {"predicted_stage_ms", p.predictedStageMs},
            {"predicted_stage_bytes", p.predictedStageBytes}, {"predicted_imbalance", p.predictedImbalance}};
    }
}

} // namespace bs::runtime
