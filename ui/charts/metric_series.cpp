#include "ui/charts/metric_series.h"

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

} // namespace bs::ui
