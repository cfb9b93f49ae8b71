#pragma once
// Pure helpers over a run's training metrics (runtime::BatchMetrics) shared by the loss, drift and
// throughput panels and the comparison table: which clock a time axis uses, the time at which a
// run first reached a target loss, and reading one metrics.jsonl record. No widgets.

#include "ui/bridge/run_backend.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <utility>
#include <vector>

namespace bs::ui {

/// The clock the time-series panels plot against. Live runs record both; simulated runs and run
/// directories without wall_time_s have virtual time only.
enum class TimeAxis
{
    Virtual,
    Wall
};

/// The sample's time on `axis` in seconds; nullopt when the sample has no wall time.
std::optional<double> sampleTime(const runtime::BatchMetrics& sample, TimeAxis axis);
/// True when every sample has a wall time (and there is at least one).
/// Mean and largest of the stages' mean drift; nullopt when the batch has no stages.
std::optional<std::pair<double, double>> driftOverStages(const runtime::BatchMetrics& sample);
bool hasWallTime(const std::vector<runtime::BatchMetrics>& samples);
/// The batch's simple noise scale B_simple (samples); nullopt when it has no estimate (yet).
std::optional<double> noiseScaleOf(const runtime::BatchMetrics& sample);

/// Time to target, the one definition (the runtime's time_to_target_s): when the run's validation
/// loss first reached `target`, on `axis` (seconds); nullopt if never, if the run recorded no
/// validation loss, or target <= 0. The training loss never counts: it is measured on the batches
/// being fitted.
std::optional<double> timeToTarget(const std::vector<runtime::BatchMetrics>& samples, double target, TimeAxis axis);

} // namespace bs::ui
