#pragma once
// The statistical model of time to target (goodput.h) from the user's own runs: the measured
// noise scale (metrics.jsonl "noise") and, for a target loss, each run's samples to reach it,
// batch per update and lag, to fit E_min and the staleness cost. `tune --calibrate`, `simulate
// --calibrate` and the GUI's Suggest read the same runs through this one function.

#include "base/result.h"
#include "runtime/plan/sim/goodput.h"

#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

/// Run directories (folders of imported rank traces are skipped: they carry no noise scale).
/// InvalidArgument naming the runs when none records a noise scale.
Result<GoodputModel> goodputFromRuns(const std::vector<std::string>& dirs, std::optional<double> targetLoss);

} // namespace bs::runtime
