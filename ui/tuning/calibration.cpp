#include "ui/tuning/calibration.h"

#include <algorithm>

namespace bs::ui {

const runtime::CostFit& Calibration::fitFor(const std::string& schedule) const
{
    const auto it = bySchedule.find(schedule);
    return it != bySchedule.end() ? it->second : pooled;
}

std::string Calibration::sourceFor(const std::string& schedule) const
{
    return fitFor(schedule).describe();
}

Result<runtime::CostSample> costSampleFromTrace(const profiler::TraceSnapshot& trace, int stages, int microBatchSize,
    std::string schedule, std::string source, runtime::FirstActions first)
{
    auto costs = runtime::measuredCosts(trace, stages, first);
    if (!costs) {
        return costs.error();
    }
    return runtime::CostSample{std::move(source), std::move(schedule), std::max(1, microBatchSize), std::move(costs).value()};
}

Result<CalibrationPtr> calibrationFromSamples(std::vector<runtime::CostSample> samples)
{
    auto pooled = runtime::fitCosts(samples);
    if (!pooled) {
        return pooled.error();
    }
    auto calibration = std::make_shared<Calibration>();
    calibration->pooled = std::move(pooled).value();
    calibration->stages = calibration->pooled.stageCount();
    calibration->source = calibration->pooled.describe();
    for (const auto& sample : samples) {
        if (!sample.schedule.empty() && !calibration->bySchedule.count(sample.schedule)) {
            if (auto own = runtime::fitCostsFor(samples, sample.schedule)) {
                calibration->bySchedule.emplace(sample.schedule, std::move(own).value());
            }
        }
    }
    calibration->samples = std::move(samples);
    return CalibrationPtr(std::move(calibration));
}

Result<CalibrationPtr> calibrationFromTrace(
    const profiler::TraceSnapshot& trace, int stages, int microBatchSize, std::string source)
{
    auto sample = costSampleFromTrace(trace, stages, microBatchSize, std::string(), std::move(source));
    if (!sample) {
        return sample.error();
    }
    return calibrationFromSamples({std::move(sample).value()});
}

double FigureCheck::relativeError() const
{
    if (measured == 0) {
        return predicted == 0 ? 0.0 : 1.0;
    }
    return (predicted - measured) / measured;
}

PredictionCheck checkPrediction(std::string run, std::string calibratedFrom, const profiler::Report& predicted,
    double predictedThroughput, const profiler::Report& measured, double measuredThroughput, int batches)
{
    const double perStep = 1e-6 / std::max(1, batches); // ns → ms per global batch
    PredictionCheck check;
    check.run = std::move(run);
    check.calibratedFrom = std::move(calibratedFrom);
    check.figures = {
        {"bubble", "%", 100.0 * predicted.bubbleFraction, 100.0 * measured.bubbleFraction},
        {"throughput", "seq/s", predictedThroughput, measuredThroughput},
        {"step time", "ms", static_cast<double>(predicted.makespan) * perStep,
            static_cast<double>(measured.makespan) * perStep},
    };
    return check;
}

} // namespace bs::ui
