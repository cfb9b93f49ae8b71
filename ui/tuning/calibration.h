#pragma once
// Calibrated predictions: the per-stage F/I/W/U times measured in a run's trace replace the
// device-profile estimates in the what-if simulations, and a check puts the calibrated prediction
// of the run's own settings next to what the run measured. Pure C++ (no Qt).

#include "profiler/analysis/report.h"
#include "profiler/trace/trace_store.h"
#include "runtime/sim/measured_costs.h"

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"

namespace bs::ui {

/// Measured costs and the settings they were measured at.
struct Calibration
{
    runtime::MeasuredCosts costs;
    int stages = 0;
    int microBatchSize = 0; ///< b of the measured run; other b scale compute times linearly
    std::string source; ///< the run's label
};
using CalibrationPtr = std::shared_ptr<const Calibration>;

/// Calibration from `trace` (run at `stages` stages and micro-batch size `microBatchSize`).
/// Errors when a stage has no forward or backward recorded yet.
Result<CalibrationPtr> calibrationFromTrace(
    const profiler::TraceSnapshot& trace, int stages, int microBatchSize, std::string source);

/// One figure predicted and measured.
struct FigureCheck
{
    std::string name; ///< "bubble", "throughput", "step time"
    std::string unit; ///< "%", "seq/s", "ms"
    double predicted = 0;
    double measured = 0;
    /// (predicted − measured) / measured; 0 when both are 0.
    double relativeError() const;
};

struct PredictionCheck
{
    std::string run; ///< the measured run's label
    std::string calibratedFrom; ///< Calibration::source; empty = uncalibrated prediction
    std::vector<FigureCheck> figures;
};

/// Bubble %, throughput (sequences/s) and step time (makespan / batches, ms) of the prediction
/// against the measurement of the same settings.
PredictionCheck checkPrediction(std::string run, std::string calibratedFrom, const profiler::Report& predicted,
    double predictedThroughput, const profiler::Report& measured, double measuredThroughput, int batches);

} // namespace bs::ui
