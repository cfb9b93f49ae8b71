#pragma once
// Suggest lists steady throughput (the what-if shows its few simulated batches): what an applied
// row must reproduce is the same search at the applied settings alone.
#include "ui/tuning/tuning_panel.h"

#include <optional>

namespace bs::ui::test {

/// The predicted steady throughput Suggest lists for the panel's settings `applied` (its a = m and
/// b only, nothing filtered out), or nullopt when the search failed.
inline std::optional<double> suggestedThroughputAt(const TuningPanel& panel, const WhatIfConfig& applied)
{
    auto scenario = scenarioFor(applied, applied.schedule());
    if (!scenario) {
        return std::nullopt;
    }
    runtime::TuneRequest request = panel.suggestRequest(applied, *scenario);
    request.accumValues = {applied.accum()};
    request.microBatchSizes = {applied.microBatchSize()};
    request.maxLag = 1 << 20;
    request.memoryBudgetBytes = 0;
    auto result = runtime::tune(request);
    if (!result || result->top.empty()) {
        return std::nullopt;
    }
    return result->top.front().throughputSamplesPerSecond;
}

} // namespace bs::ui::test
