#pragma once
// Which partition a run uses, from its config: pipeline.partition = "flops" (blocks balanced by
// FLOPs, layers_per_stage overriding), an explicit list of layer units per stage, or "measured"
// (the constrained partitioner over unit costs measured on the run's device, with the schedule's
// in-flight bounds and pipeline.memory_budget_mib). The same answer serves the run (which records
// it in summary.json), `bubblescope-cli partition` and the GUI. Torch-free: measured unit costs
// come from the training runtime (runtime/train/model/unit_profiler.h), FLOP estimates otherwise.

#include "base/result.h"
#include "runtime/plan/config/run_config.h"
#include "runtime/plan/partition/stage_partitioner.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace bs::runtime {

struct PartitionChoice
{
    std::string mode; ///< "flops", "measured" or "explicit" (pipeline.partition)
    bool costsMeasured = false; ///< unit costs from the profiling pass (else FLOP estimates)
    std::vector<UnitCost> units; ///< the costs the prediction used
    std::vector<int> layersPerStage; ///< blocks per stage
    PartitionPlan plan; ///< units per stage, predicted stage times (ms per micro-batch) and bytes
    std::int64_t budgetBytes = 0;
};

/// The partition `config` asks for, predicted with `units` (layerUnitCount() entries; empty =
/// FLOP estimates, flopsUnitCosts()). Errors name the field: pipeline.partition (bad counts),
/// pipeline.memory_budget_mib (no split fits), the schedule's fields.
Result<PartitionChoice> choosePartition(const RunConfig& config, const std::vector<UnitCost>& units = {});

/// {"mode", "costs": "measured"|"flops", "units_per_stage", "layers_per_stage", "stage_ms",
///  "stage_bytes", "slowest_ms", "mean_ms", "imbalance", "budget_bytes", "unit_costs": [...]}.
void to_json(nlohmann::json& j, const PartitionChoice& choice);

} // namespace bs::runtime
