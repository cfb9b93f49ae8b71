#pragma once
// The statistical model of time to target (goodput.h) from the user's own runs: the measured
// noise scale (metrics "noise") and, for a target loss, each run's samples to reach it, batch
// per update and lag, to fit E_min and the staleness cost. `tune --calibrate`, `simulate
// --calibrate` and the GUI's what-if and Suggest read runs through this one function: the CLI
// from run directories, the GUI from the metrics of the runs on screen (live ones included).

#include "base/result.h"
#include "runtime/plan/config/run_config.h"
#include "runtime/plan/rundir/run_metrics.h"
#include "runtime/plan/sim/goodput.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

/// One training run's settings and per-batch metrics, wherever they are held.
struct StatisticsRun
{
    std::string source; ///< how the model's description names it: "run runs/paci-a8", "live run PACI a=8 b=8"
    RunConfig config; ///< the settings it trained with: b, schedule, m, a, the lr rule
    std::shared_ptr<const std::vector<BatchMetrics>> metrics; ///< one per global batch, in order
    /// A live Apply changed its settings mid-run: its noise scale counts, its samples to target
    /// (counted at one batch per update) do not.
    bool settingsChanged = false;
};

/// The model from `runs` (those without a noise record are skipped: an imported job, a replay).
/// InvalidArgument naming the runs when none records a noise scale.
Result<GoodputModel> goodputFromRuns(const std::vector<StatisticsRun>& runs, std::optional<double> targetLoss);

/// The runs of `dirs` (run directories; folders of imported rank traces are skipped: they carry no
/// statistics), read without their traces. Errors name the directory and the field.
Result<std::vector<StatisticsRun>> statisticsRunsFrom(const std::vector<std::string>& dirs);

/// goodputFromRuns(statisticsRunsFrom(dirs), targetLoss); InvalidArgument when `dirs` is empty.
Result<GoodputModel> goodputFromRuns(const std::vector<std::string>& dirs, std::optional<double> targetLoss);

} // namespace bs::runtime
