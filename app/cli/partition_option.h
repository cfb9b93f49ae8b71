#pragma once
// --partition of `simulate`, `compare` and `tune` (with --model): which layer units each stage
// holds, so the CLI's what-if predicts a split before a run trains it. "flops" (blocks by FLOPs,
// the default), "balanced" (runtime/plan/partition's partitioner over FLOP unit estimates: the split a
// run's pipeline.partition = "measured" picks when the units cost what their FLOPs say) or layer
// units per stage, e.g. 3,3,3,2 (units: embedding, each block, final norm, head).

#include "base/result.h"
#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/partition/stage_partitioner.h"
#include "runtime/plan/schedule/schedule.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace bs::cli {

/// The option's help text (shared so the three commands say the same).
std::string partitionOptionHelp();

/// Refuses anything but flops, balanced or a comma list of positive integers, with the field and
/// the allowed values (exit 2 before any work).
CLI::Validator partitionSpec();
/// train's --partition: flops, measured (pipeline.partition's words) or the counts.
CLI::Validator trainPartitionSpec();
/// "3,3,3,2" as counts; empty when any item is not a positive integer.
std::vector<int> partitionCounts(const std::string& text);

/// Layer units per stage for `spec` (empty = "flops": the scenario's own FLOPs split). Errors name
/// --partition (counts that do not fit the model or the stages) or the schedule's fields.
Result<std::vector<int>> unitsForPartition(
    const std::string& spec, const GptShape& shape, const runtime::ScheduleParams& schedule, int microBatch);

/// --partition with --unit-costs FILE (a unit profile: `partition --measured --json`): the split
/// and the measured units the scenario groups by it (runtime::GptScenario's fields).
struct CliPartition
{
    std::vector<int> unitsPerStage; ///< empty = the FLOPs split with device-profile times
    std::vector<runtime::UnitCost> unitCosts; ///< empty = device-profile times
    int unitCostsMicroBatch = 0;
};

/// Reads the profile (errors name --unit-costs: unreadable, wrong unit count for the model) and
/// resolves `spec` over it; with a profile and "flops", the FLOPs split timed by the units.
Result<CliPartition> cliPartition(const std::string& spec, const std::string& unitCostsPath, const GptShape& shape,
    const runtime::ScheduleParams& schedule, int microBatch);

std::string unitCostsOptionHelp();

} // namespace bs::cli
