#pragma once
// `bubblescope-cli launch --nproc-per-node N -- train ...`: starts N local ranks of this same
// executable the way torchrun does (a free port on 127.0.0.1, RANK/WORLD_SIZE/LOCAL_RANK/
// MASTER_ADDR/MASTER_PORT in each rank's environment, `--distributed` added), prefixes each
// rank's output lines with "[rank K] ", and returns the exit code of the first rank that failed
// (0 when all succeed). When a rank fails, the others get `grace` seconds to exit on their own
// (they notice within their --timeout), then are killed: no orphans. Ranks also die with the
// launcher (PR_SET_PDEATHSIG). SIGINT/SIGTERM are forwarded to the ranks; when rank 0 did not
// merge the run itself (a stop, a failure), the launcher merges what the ranks kept in OUT/rankK
// (runtime/train/dist/rank_merge.h) into OUT and exits 130/143 after a stop. No torch, no Qt.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace bs::cli {

struct LaunchArgs
{
    int nprocPerNode = 1;
    bool json = false;                 ///< pass --json to the ranks; print rank 0's (merged) summary
    double graceS = 90.0;              ///< after the first failure, how long the others may take
    std::vector<std::string> command;  ///< the bubblescope-cli command after `--` (e.g. train ...)
};

/// Runs the ranks; returns the exit code (2 for usage errors of the launcher itself).
int runLaunch(const LaunchArgs& args, const std::string& executable);
/// Registers the `launch` subcommand.
void addLaunchCommand(CLI::App& app, int& exitCode);

} // namespace bs::cli
