#pragma once
// Stage balancing under a memory budget, as the PACI authors' partitioner does it: contiguous
// groups of layer units (gpt_shape.h: embedding, each block, final norm, head) minimising the
// slowest stage's forward + backward time, subject to, for every stage s,
//     static(s) + inflight(s) · activations(s) ≤ budget
// where static is weights + gradients + optimizer state (+ stashed weight copies for schedules that
// keep several versions) and inflight(s) is the schedule's stated bound on micro-batches in flight
// at s (1F1B / PACI: p − s; GPipe: m), read from the generated schedule, not from its name.
// Torch-free: unit costs come from a measurement (runtime/train/model/unit_profiler.h) or from FLOPs.

#include "base/result.h"
#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/schedule/schedule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bs::runtime {

/// One layer unit's cost for one micro-batch.
struct UnitCost
{
    double forwardMs = 0.0;
    double backwardMs = 0.0; ///< full backward (input + weight gradients)
    std::int64_t staticBytes = 0; ///< weights + gradients + optimizer state
    std::int64_t paramBytes = 0; ///< one copy of the weights (what a stashed version costs)
    std::int64_t activationBytes = 0; ///< kept from the forward for the backward, per micro-batch

    friend bool operator==(const UnitCost&, const UnitCost&) = default;
};

/// `units` measured at `measuredMicroBatch` sequences, as they would be at `microBatch`: times and
/// activations grow with the tokens (scaled by the ratio), weights and their state do not. The
/// same units when either size is < 1.
std::vector<UnitCost> unitCostsAt(std::vector<UnitCost> units, int measuredMicroBatch, int microBatch);

/// What a schedule asks of each stage's memory.
struct StageDemand
{
    std::vector<int> inflight; ///< per stage: micro-batches in flight at most
    std::vector<int> weightVersions; ///< per stage: weight versions held at most (1 = no copies)
};

/// The schedule's stated bounds per stage (Schedule::inflightBound / weightVersionBound of the
/// generated, validated schedule for one global batch). Errors: the schedule's own (field named).
Result<StageDemand> stageDemand(const ScheduleParams& params);

struct PartitionProblem
{
    std::vector<UnitCost> units; ///< in order (layerUnitCount() for the GPT)
    int stages = 1;
    StageDemand demand; ///< one entry per stage; empty = 1 in flight, 1 version
    std::int64_t budgetBytes = 0; ///< per stage; 0 = no bound
};

struct PartitionPlan
{
    std::vector<int> unitCount; ///< per stage, each >= 1
    std::vector<double> stageMs; ///< forward + backward per micro-batch
    std::vector<std::int64_t> stageBytes; ///< static + inflight · activations (+ stashed copies)
    double slowestMs = 0.0;
    double meanMs = 0.0;
    /// slowest / mean stage time: 1 = perfectly balanced.
    double imbalance() const { return meanMs > 0.0 ? slowestMs / meanMs : 1.0; }
};

/// The predicted stage times and memory of a given partition (counts per stage, summing to the units).
PartitionPlan evaluatePartition(const PartitionProblem& problem, const std::vector<int>& unitCount);

/// The contiguous partition with the smallest slowest stage that fits the budget; among equal
/// slowest stages the one with the smallest sum of squared stage times (no stage left needlessly
/// heavy). Exact (dynamic programme over (stage, units), O(p · n²)). Errors: InvalidArgument when
/// fewer units than stages or demand of the wrong size; InvalidArgument naming pipeline.memory_budget_mib, the budget
/// and the least budget any split would need, when none fits.
Result<PartitionPlan> partitionStages(const PartitionProblem& problem);

/// FLOP-proportional unit costs for `shape` (times in FLOP-milliseconds: only their ratios matter)
/// and the byte counts of an fp32 model with AdamW: the prediction when nothing was measured.
std::vector<UnitCost> flopsUnitCosts(const GptShape& shape, int microBatch);

} // namespace bs::runtime
