#pragma once

#include "app/cli/train_args.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace bs::cli {

/// `compare --train`: trains `schedules` with the shared options for real (runTrainComparison in
/// builds with LibTorch). Returns the exit code.
using TrainComparison = std::function<int(const TrainArgs& args, const std::vector<std::string>& schedules)>;

/// Registers `schedules`, `simulate` and `compare` on `app`. Each sets `exitCode` when it runs.
/// `train` runs `compare --train`; without it (no LibTorch in the build) --train is an error.
void addSimulationCommands(CLI::App& app, int& exitCode, TrainComparison train = {});

} // namespace bs::cli
