// The partition a training run uses (session_state.h): "measured" profiles every layer unit on
// stage 0's device first (runtime/train/model/unit_profiler.h), then the constrained partitioner picks
// the split (runtime/plan/partition); the choice is recorded in summary.json.
#include "runtime/plan/partition/partition_choice.h"
#include "runtime/train/exec/session_state.h"
#include "runtime/train/exec/unit_profile.h"
#include "runtime/train/model/unit_profiler.h"

#include <algorithm>

namespace bs::runtime {

Result<std::vector<UnitCost>> profileUnitsOnDevice(const RunConfig& config, int device)
{
    UnitProfileOptions o;
    o.shape = config.model.shape;
    o.microBatchSize = config.pipeline.microBatchSize;
    o.device = device;
    o.bf16 = effectiveDtype(config) == "bf16";
    o.seed = static_cast<std::uint64_t>(config.training.seed);
    return profileLayerUnits(o);
}

Result<std::vector<UnitCost>> measureLayerUnits(const RunConfig& config)
{
    const DeviceSpec d = parseDeviceName(config.device.name);
    if (config.device.intraOpThreads > 0) {
        setIntraOpThreads(config.device.intraOpThreads); // time the units as the run will compute them
    }
    return profileUnitsOnDevice(config, d.cuda ? std::max(d.index, 0) : -1);
}

Result<PartitionRecord> resolvePartition(const RunConfig& config, ModelOptions& mo)
{
    std::vector<UnitCost> measured;
    if (config.pipeline.partition == "measured") {
        auto units = profileUnitsOnDevice(config, mo.deviceOf(0));
        if (!units) {
            return units.error();
        }
        measured = std::move(units.value());
    }
    auto choice = choosePartition(config, measured);
    if (!choice) {
        return choice.error();
    }
    if (config.pipeline.partition != "flops") {
        mo.unitsPerStage = choice->plan.unitCount;
    }
    PartitionRecord r;
    r.mode = choice->mode;
    r.costs = choice->costsMeasured ? "measured" : "flops";
    r.unitsPerStage = choice->plan.unitCount;
    r.layersPerStage = choice->layersPerStage;
    r.predictedStageMs = choice->plan.stageMs;
    r.predictedStageBytes = choice->plan.stageBytes;
    r.predictedImbalance = choice->plan.imbalance();
    return r;
}

} // namespace bs::runtime
