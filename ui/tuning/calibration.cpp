#include "ui/tuning/calibration.h"

#include <algorithm>

namespace bs::ui {

Result<CalibrationPtr> calibrationFromTrace(
    const profiler::TraceSnapshot& trace, int stages, int microBatchSize, std::string source)
{
    auto costs = runtime::measuredCosts(trace, stages);
    if (!costs) {
        return costs.error();
    }
    auto calibration = std::make_shared<Calibration>();
    calibration->costs = std::move(costs).value();
    calibration->stages = stages;
    calibration->microBatchSize = std::max(1, microBatchSize);
    calibration->source = std::move(source);
    return CalibrationPtr(std::move(calibration));
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
