#pragma once
// Calibrated predictions: the per-stage F/I/W/U times measured in runs' traces, fitted in the
// micro-batch size b (runtime::fitCosts), replace the device-profile estimates in the what-if
// simulations; a check puts the calibrated prediction of each run's own settings next to what the
// run measured. One Calibration object serves the sliders, Suggest and the check. Pure C++ (no Qt).

#include "base/result.h"
#include "profiler/analysis/report.h"
#include "profiler/trace/trace_store.h"
#include "runtime/plan/sim/cost_fit.h"
#include "runtime/plan/sim/measured_costs.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace bs::ui {

/// The measured runs and the fits predictions use: each schedule from its own runs where it has
/// some, otherwise from all (runtime::fitCostsFor).
struct Calibration
{
    std::vector<runtime::CostSample> samples;
    runtime::CostFit pooled; ///< all samples
    std::map<std::string, runtime::CostFit> bySchedule; ///< one per schedule that has samples
    int stages = 0;
    std::string source; ///< pooled.describe(): "calibrated from run X (b = 8; ...)"

    const runtime::CostFit& fitFor(const std::string& schedule) const;
    /// "calibrated from run X (...)" for the fit `schedule` uses.
    std::string sourceFor(const std::string& schedule) const;
};
using CalibrationPtr = std::shared_ptr<const Calibration>;

/// One run's measured costs (`trace` run at `stages` stages, micro-batch size `microBatchSize`).
/// `first`: StartUp for a run Bubblescope trained (its first actions' extra is a ColdCost),
/// Steady for an imported job profiled after warm-up. Errors when a stage has no forward or
/// backward recorded yet.
Result<runtime::CostSample> costSampleFromTrace(const profiler::TraceSnapshot& trace, int stages, int microBatchSize,
    std::string schedule, std::string source, runtime::FirstActions first = runtime::FirstActions::StartUp);
/// The calibration of `samples` (same stage count). Errors when empty or mixed.
Result<CalibrationPtr> calibrationFromSamples(std::vector<runtime::CostSample> samples);
/// A calibration from one trace (its fit applies to every schedule).
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
