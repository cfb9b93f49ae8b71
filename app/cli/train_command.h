#pragma once
// `bubblescope-cli train` (and `compare --train`): real training through RunSession. No torch, no Qt.
//
// Hook-up in main.cpp:   bs::cli::addTrainCommand(app, exitCode);
// and for `compare --train`: call runTrainComparison() from the compare command when --train is set.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bs::cli {

/// Everything `train` accepts. Unset optionals keep the config file's (or the demo's) value.
struct TrainArgs
{
    std::string configPath; ///< --config; empty = the embedded demo
    std::optional<std::string> schedule; ///< --schedule
    std::optional<int> stages, microbatches, accum, microBatchSize, steps, threads, evalInterval;
    std::optional<std::string> model;    ///< --model preset
    std::optional<std::int64_t> seed;    ///< --seed (model init and data)
    std::optional<std::string> data;     ///< --data spec
    std::optional<double> targetLoss;    ///< --target-loss
    bool reference = false;              ///< --reference
    std::string outDir;                  ///< --out; empty = no run directory
    bool overwrite = false;              ///< --overwrite
    bool json = false;                   ///< --json: print the summary object on stdout
    std::string executor = "serial";     ///< --executor serial|threaded (one thread per stage)
    bool distributed = false;            ///< --distributed: this process is one rank (torchrun env)
    double timeoutS = 60.0;              ///< --timeout: bound on each wait for another rank (distributed)
};

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
