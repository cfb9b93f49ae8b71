#pragma once
// Stage costs from layer units measured on the run's device (runtime/train/model/unit_profiler.h, the
// measured partition's profiling pass), grouped by a partition: the what-if and `simulate` then
// predict a split unit by unit, the way the partitioner chose it, before anything is trained.

#include "base/result.h"
#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/partition/stage_partitioner.h"
#include "runtime/plan/sim/cost_model.h"

#include <vector>

namespace bs::runtime {

/// Per stage of `unitsPerStage` (layer units, each >= 1, summing to units.size()): F = the units'
/// forward, I = W = half their backward (a full backward B = I + W is what was timed), the units'
/// weight and activation bytes. Times and activations are scaled by microBatch / measuredMicroBatch
/// (the pass timed one micro-batch size; the costs it measures grow with the tokens); weights are
/// not. The update streams the AdamW state at `device`'s bandwidth, transfers use its link, as in
/// costModelFromGpt. Errors name pipeline.partition (bad counts) or the unit costs (wrong size).
Result<CostModel> costModelFromUnitCosts(const GptShape& shape, const std::vector<UnitCost>& units,
    int measuredMicroBatch, const std::vector<int>& unitsPerStage, int microBatch, const DeviceProfile& device);

} // namespace bs::runtime
