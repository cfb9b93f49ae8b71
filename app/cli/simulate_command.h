#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace bs::cli {

/// `compare --train`: the schedules and the shared options, for the LibTorch build to run for real.
struct TrainComparisonRequest
{
    std::vector<std::string> schedules;
    std::optional<int> stages, microbatches, accum, microBatchSize, steps;
    std::optional<std::string> model;
    std::optional<double> targetLoss;
    std::string configPath;
    bool json = false;
};
using TrainComparison = std::function<int(const TrainComparisonRequest&)>;

/// Registers `schedules`, `simulate` and `compare` on `app`. Each sets `exitCode` when it runs.
/// `train` runs `compare --train`; without it (no LibTorch in the build) --train is an error.
void addSimulationCommands(CLI::App& app, int& exitCode, TrainComparison train = {});

} // namespace bs::cli
