#pragma once
// JSON form of a Report: the CLI's --json output and summary.json share it.

#include "profiler/analysis/report.h"

#include <nlohmann/json.hpp>

namespace bs::profiler {

/// Times in seconds. Keys: makespan, bubble_fraction, steady_bubble_fraction, utilization,
/// idle_by_cause{}, per_stage[] {stage, busy, idle, bubble_fraction, idle_by_cause{},
/// peak_inflight, peak_memory_bytes, max_version_lag, version_lag_histogram{lag: count},
/// peak_weight_versions}.
nlohmann::json toJson(const Report& report);
nlohmann::json toJson(const StageReport& stage);

} // namespace bs::profiler
