#include "ui/charts/metric_series.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace bs::ui {

std::optional<double> sampleTime(const MetricSample& sample, TimeAxis axis)
{
    if (axis == TimeAxis::Virtual) {
        return sample.timeSeconds;
    }
    if (sample.wallSeconds < 0) {
        return std::nullopt;
    }
    return sample.wallSeconds;
}

bool hasWallTime(const std::vector<MetricSample>& samples)
{
    return !samples.empty()
        && std::all_of(samples.begin(), samples.end(), [](const MetricSample& s) { return s.wallSeconds >= 0; });
}

std::optional<double> timeToTarget(const std::vector<MetricSample>& samples, double target, TimeAxis axis)
{
    if (target <= 0) {
        return std::nullopt;
    }
    const bool useValidation =
        std::any_of(samples.begin(), samples.end(), [](const MetricSample& s) { return s.valLoss.has_value(); });
    for (const auto& s : samples) {
        const std::optional<double> loss = useValidation ? s.valLoss : std::optional<double>(s.loss);
        if (loss && *loss <= target) {
            return sampleTime(s, axis);
        }
    }
    return std::nullopt;
}

std::optional<MetricSample> metricSampleFromJson(const nlohmann::json& record)
{
    if (!record.is_object() || !record.contains("train_loss") || !record["train_loss"].is_number()) {
        return std::nullopt;
    }
    MetricSample s;
    s.timeSeconds = record.value("virtual_time_s", 0.0);
    s.step = record.value("step", 0);
    s.loss = record["train_loss"].get<double>();
    if (const auto it = record.find("wall_time_s"); it != record.end() && it->is_number()) {
        s.wallSeconds = it->get<double>();
    }
    if (const auto it = record.find("val_loss"); it != record.end() && it->is_number()) {
        s.valLoss = it->get<double>();
    }
    s.tokensPerSecond = record.value("tokens_per_s_virtual", 0.0);
    s.tokensPerSecondWall = record.value("tokens_per_s_wall", 0.0);
    if (const auto it = record.find("per_stage"); it != record.end() && it->is_array()) {
        for (const auto& stage : *it) {
            if (stage.is_object() && stage.contains("mean_drift") && stage["mean_drift"].is_number()) {
                s.stageDrift.push_back(stage["mean_drift"].get<double>());
            }
        }
    }
    return s;
}

} // namespace bs::ui
