#include "ui/charts/metric_series.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

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
    for (const auto& s : samples) {
        if (s.valLoss && *s.valLoss <= target) {
            return sampleTime(s, axis);
        }
    }
    return std::nullopt;
}

namespace {

/// `record[key]` as a finite double, or `fallback` when absent, null, non-numeric or not finite:
/// records reach here from files anyone can edit, and nlohmann's value() throws on a wrong type.
double numberOr(const nlohmann::json& record, const char* key, double fallback)
{
    const auto it = record.find(key);
    if (it == record.end() || !it->is_number()) {
        return fallback;
    }
    const double v = it->get<double>();
    return std::isfinite(v) ? v : fallback;
}

} // namespace

std::optional<MetricSample> metricSampleFromJson(const nlohmann::json& record)
{
    if (!record.is_object()) {
        return std::nullopt;
    }
    const double loss = numberOr(record, "train_loss", std::nan(""));
    if (!std::isfinite(loss)) {
        return std::nullopt;
    }
    MetricSample s;
    s.timeSeconds = numberOr(record, "virtual_time_s", 0.0);
    const double step = numberOr(record, "step", 0.0);
    s.step = step >= 0 && step <= 2147483647.0 ? static_cast<int>(step) : 0;
    s.loss = loss;
    s.wallSeconds = numberOr(record, "wall_time_s", s.wallSeconds);
    if (const double val = numberOr(record, "val_loss", std::nan("")); std::isfinite(val)) {
        s.valLoss = val;
    }
    s.tokensPerSecond = numberOr(record, "tokens_per_s_virtual", 0.0);
    s.tokensPerSecondWall = numberOr(record, "tokens_per_s_wall", 0.0);
    if (const auto it = record.find("per_stage"); it != record.end() && it->is_array()) {
        for (const auto& stage : *it) {
            if (stage.is_object()) {
                if (const double drift = numberOr(stage, "mean_drift", std::nan("")); std::isfinite(drift)) {
                    s.stageDrift.push_back(drift);
                }
            }
        }
    }
    return s;
}

} // namespace bs::ui
