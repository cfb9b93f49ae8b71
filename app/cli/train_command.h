#pragma once
// `bubblescope-cli train` (and `compare --train`): real training through RunSession. No torch, no Qt.
//
// Hook-up in main.cpp:   bs::cli::addTrainCommand(app, exitCode);
// and for `compare --train`: call runTrainComparison() from the compare command when --train is set.

#include "app/cli/train_args.h"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace bs::cli {

/// Adds the options above to `sub`.
void addTrainOptions(CLI::App& sub, TrainArgs& args);
/// Registers the `train` subcommand; sets exitCode (0 ok, 1 run/IO failure, 2 usage) when it runs.
void addTrainCommand(CLI::App& app, int& exitCode);
/// Runs one training run as `args` say; prints a progress line on a terminal (stderr), the summary
/// (text or JSON) on stdout. Returns the exit code. Ctrl-C stops the run cleanly (run directory kept).
int runTrain(const TrainArgs& args);
/// Trains every schedule in `schedules` with `args` and prints time-to-target side by side
/// (text table or a JSON array). Returns the exit code.
int runTrainComparison(const TrainArgs& args, const std::vector<std::string>& schedules);

} // namespace bs::cli
