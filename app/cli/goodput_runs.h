#pragma once
// The calibration of action times from the user's own runs (or imported rank traces); the noise
// scale's model from runs is runtime/plan/sim/goodput_runs.h (torch- and Qt-free, the GUI's too).

#include "base/result.h"
#include "runtime/plan/sim/cost_fit.h"

#include <string>
#include <vector>

namespace bs::cli {

/// The measured per-stage action times of `dirs` (run directories, or folders of torch.profiler
/// rank traces of the user's own job, imported at `importedMicroBatchSize`), fitted in b the way the
/// GUI's calibration is (runtime::fitCostsFor: `schedule`'s own runs when there are any). `tune
/// --calibrate` and `simulate --calibrate` both call it, so they predict with one calibration.
Result<runtime::CostFit> calibrationFromRuns(
    const std::vector<std::string>& dirs, const std::string& schedule, int importedMicroBatchSize);

} // namespace bs::cli
