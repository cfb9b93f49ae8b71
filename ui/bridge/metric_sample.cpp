#include "ui/bridge/run_backend.h"

#include <cmath>

namespace bs::ui {

std::optional<MetricSample> metricSampleOf(const runtime::BatchMetrics& batch)
{
    if (!std::isfinite(batch.trainLoss)) {
        return std::nullopt;
    }
    MetricSample sample;
    sample.timeSeconds = batch.virtualTimeS;
    sample.step = batch.step;
    sample.loss = batch.trainLoss;
    sample.wallSeconds = batch.wallTimeS;
    if (batch.valLoss && std::isfinite(*batch.valLoss)) {
        sample.valLoss = batch.valLoss;
    }
    sample.tokensPerSecond = batch.tokensPerSVirtual;
    sample.tokensPerSecondWall = batch.tokensPerSWall;
    for (const auto& stage : batch.stages) {
        sample.stageDrift.push_back(stage.meanDrift);
    }
    return sample;
}

} // namespace bs::ui
