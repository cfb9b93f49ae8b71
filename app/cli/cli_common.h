#pragma once
// What the CLI subcommands share: the schedule and cost options, error printing, exit codes.

#include "base/result.h"
#include "runtime/plan/sim/simulator.h"

#include <CLI/CLI.hpp>

#include <string>

namespace bs::cli {

/// Exit codes: 0 success, 1 a run failure (diverged, a rank died, nothing fits), 2 bad input: a
/// bad option value, a file that cannot be parsed, or a path that cannot be read or written.
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

/// "error: <message>\n  at: <context>" on stderr; returns the exit code for `error`.
int reportError(const Error& error);

/// Options that describe a simulated pipeline; bound to a CLI11 subcommand.
struct SimulationOptions
{
    std::string schedule = "1f1b";
    int stages = 8;
    int microbatches = 8;
    int accum = 0;
    int batches = 1;
    int extraDepth = 0;
    int stagesPerRank = 0;       ///< v; 0 = the schedule's own
    std::string cost = "1,1,1";
    double overlapMs = 0;        ///< DualPipeV's overlapped F&B pair per rank; 0 = F + B
    double commMs = 0;
    std::string model;           ///< GPT preset; when set, costs come from the model and device
    int microBatchSize = 1;
    std::string deviceProfile = "cpu";
    std::string partition = "flops"; ///< with --model: flops, balanced or units per stage (partition_option.h)
    std::string unitCosts; ///< with --model: a unit profile (partition --measured --json)
    bool recompute = false; ///< model.recompute: an extra forward per backward, inputs kept only

    CLI::Option* microbatchesOption = nullptr;
    /// Given or not: --cost and --comm are hand costs, --device-profile the model's hardware, and
    /// a flag that does not apply is refused, never dropped.
    CLI::Option* scheduleOption = nullptr;
    CLI::Option* costOption = nullptr;
    CLI::Option* commOption = nullptr;
    CLI::Option* deviceProfileOption = nullptr;

    /// Adds --stages, --microbatches, --accum, --batches, --extra-depth, --stages-per-rank, --cost,
    /// --overlap-cost, --comm, --model, --micro-batch-size, --device-profile, --partition,
    /// --recompute (and --schedule when `withSchedule`).
    void addTo(CLI::App& app, bool withSchedule);
    /// Builds the request for `scheduleName`, applying "paci: m = a unless --microbatches is set".
    /// In a comparison (`comparing`), --accum shapes only the paci row instead of being an error
    /// for the synchronous schedules.
    Result<runtime::SimulationRequest> request(const std::string& scheduleName, bool comparing = false) const;
};

} // namespace bs::cli
