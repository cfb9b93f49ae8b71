#pragma once
// A calibration: per-stage action times as a function of the micro-batch size b, fitted from the
// times measured in one or more runs. Real devices do not scale linearly in b: a fixed cost
// (kernel launches, Python-free but still per-call overheads, small GEMMs far below peak) is paid
// per action whatever b is, so per-sample cost falls with b until the device saturates. With runs
// at two or more distinct b each action time is fitted affine in b (t = fixed + perSample·b, least
// squares, both terms >= 0); with runs at one b only, the time is taken proportional to b (the
// only model one point determines), and the fit says so. The GUI's sliders, Suggest, the
// prediction check and `bubblescope-cli tune --calibrate` all predict through this one object.
// Torch-free, Qt-free.

#include "base/result.h"
#include "runtime/plan/sim/cost_model.h"
#include "runtime/plan/sim/measured_costs.h"

#include <string>
#include <vector>

namespace bs::runtime {

/// One run's measured costs and the settings they were measured at.
struct CostSample
{
    std::string source; ///< the run's label or directory ("run X")
    std::string schedule; ///< catalogue name of the run's schedule
    int microBatchSize = 1; ///< b of the run
    MeasuredCosts costs;
};

/// t(b) = fixedNs + perSampleNs · b.
struct AffineTime
{
    double fixedNs = 0;
    double perSampleNs = 0;

    TimeNs at(int microBatchSize) const;
};

struct StageFit
{
    AffineTime forward, backwardInput, backwardWeight;
    TimeNs update = 0; ///< the optimizer step does not depend on b (mean over samples)
    ColdCost cold; ///< the first actions' one-time extras, mean over samples (not b-dependent)
};

struct CostFit
{
    std::vector<StageFit> stages;
    TimeNs comm = 0; ///< mean Send time over samples that recorded any (0 = none)
    std::vector<int> microBatchSizes; ///< distinct b the fit saw, ascending
    std::vector<std::string> sources; ///< CostSample::source of every sample used
    /// Largest relative error of a fitted stage compute time (F + I + W) against a sample it was
    /// fitted on; 0 with one b (the fit passes through it exactly).
    double maxRelativeError = 0;

    bool affine() const { return microBatchSizes.size() >= 2; }
    int stageCount() const { return static_cast<int>(stages.size()); }
    /// One-time extras of the first actions, summed over stages and kinds (ns).
    TimeNs coldTotal() const;
    /// "calibrated from run A, run B (b = 2, 8; affine in b, fit error 3.1 %; first actions
    /// +1.9 ms once)"; the last part only when the runs' first actions were slower.
    std::string describe() const;
};

/// Fits `samples` (all with the same stage count; others are an error naming the sample).
/// Errors when `samples` is empty.
Result<CostFit> fitCosts(const std::vector<CostSample>& samples);

/// The fit a prediction of `schedule` uses: from the samples measured under that schedule when
/// there are any (a schedule's action times differ: stashed weights, memory pressure), otherwise
/// from all samples. When the schedule's own runs are all at one b but other runs saw other b,
/// the pooled fit's shape in b is kept and scaled to pass through the schedule's own times.
Result<CostFit> fitCostsFor(const std::vector<CostSample>& samples, const std::string& schedule);

/// `model` with its action times from `fit` at micro-batch size `microBatchSize` (bytes and memory
/// figures kept). Stage counts that differ re-split the fitted total evenly, as withMeasuredTimes.
CostModel withFittedTimes(CostModel model, const CostFit& fit, int microBatchSize);

} // namespace bs::runtime
