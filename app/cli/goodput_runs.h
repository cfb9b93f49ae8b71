#pragma once
// The statistical model of time to target (runtime/plan/sim/goodput.h) from the user's own runs:
// the measured noise scale (metrics.jsonl "noise") and, for a target loss, each run's samples to
// reach it, batch per update and lag, to fit E_min and the staleness cost. `tune --calibrate`
// and `simulate --calibrate` read the same runs through this one function.

#include "base/result.h"
#include "runtime/plan/sim/cost_fit.h"
#include "runtime/plan/sim/goodput.h"

#include <optional>
#include <string>
#include <vector>

namespace bs::cli {

/// The measured per-stage action times of `dirs` (run directories, or folders of torch.profiler
/// rank traces of the user's own job, imported at `importedMicroBatchSize`), fitted in b the way the
/// GUI's calibration is (runtime::fitCostsFor: `schedule`'s own runs when there are any). `tune
/// --calibrate` and `simulate --calibrate` both call it, so they predict with one calibration.
Result<runtime::CostFit> calibrationFromRuns(
    const std::vector<std::string>& dirs, const std::string& schedule, int importedMicroBatchSize);

/// Run directories (folders of imported rank traces are skipped: they carry no noise scale).
/// InvalidArgument naming the runs when none records a noise scale.
Result<runtime::GoodputModel> goodputFromRuns(const std::vector<std::string>& dirs, std::optional<double> targetLoss);

} // namespace bs::cli
