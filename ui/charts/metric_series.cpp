#include "ui/charts/metric_series.h"

#include <algorithm>
#include <cmath>

namespace bs::ui {

std::optional<double> sampleTime(const runtime::BatchMetrics& sample, TimeAxis axis)
{
    return axis == TimeAxis::Virtual ? std::optional<double>(sample.virtualTimeS) : sample.wallTimeS;
}

bool hasWallTime(const std::vector<runtime::BatchMetrics>& samples)
{
    return !samples.empty() && std::all_of(samples.begin(), samples.end(), [](const runtime::BatchMetrics& s) {
        return s.wallTimeS.has_value();
    });
}

std::optional<std::pair<double, double>> driftOverStages(const runtime::BatchMetrics& sample)
{
    if (sample.stages.empty()) {
        return std::nullopt;
    }
    double sum = 0.0;
    double top = sample.stages.front().meanDrift;
    for (const runtime::StageMetrics& st : sample.stages) {
        sum += st.meanDrift;
        top = std::max(top, st.meanDrift);
    }
    return std::pair{sum / static_cast<double>(sample.stages.size()), top};
}

std::optional<double> timeToTarget(const std::vector<runtime::BatchMetrics>& samples, double target, TimeAxis axis)
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

std::optional<double> noiseScaleOf(const runtime::BatchMetrics& sample)
{
    if (!sample.noise || !std::isfinite(sample.noise->bSimple) || sample.noise->bSimple <= 0.0) {
        return std::nullopt;
    }
    return sample.noise->bSimple;
}

} // namespace bs::ui
