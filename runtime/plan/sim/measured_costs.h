#pragma once
// Measured costs: the mean duration of each action kind on each stage of a recorded trace (a live
// training run or an opened run directory), as a cost model the simulator can replay. This is what
// calibrates the GUI's what-if predictions: slider moves then predict from measured times instead
// of a device profile. Torch-free, Qt-free.

#include "base/result.h"
#include "profiler/trace/trace_store.h"
#include "runtime/plan/sim/cost_model.h"

#include <cstdint>
#include <vector>

namespace bs::runtime {

/// Per-stage mean F/I/W/U durations of a trace. A full backward B (I and W fused) is split into
/// I = W = B/2 when the stage recorded no separate I and W, so duration(Backward) = mean B.
/// The first action of each kind on a stage (the earliest) is not in the mean: what it took beyond
/// the mean of the others is the stage's ColdCost (cost_model.h), paid once. A run's first
/// actions are its slowest (the process's start-up), and they lie on the critical path, so a
/// mean that spread them over every action predicted a 3-step PACI run 13-17 % too fast.
struct MeasuredCosts
{
    std::vector<StageCost> stages; ///< times only (bytes stay 0/1): merge into a model with withMeasuredTimes()
    std::vector<std::int64_t> computeEvents; ///< per stage: compute events that were averaged
    TimeNs comm = 0; ///< mean Send duration; 0 when the trace has no Send events
    bool commMeasured = false; ///< true when Send events were found

    int stageCount() const { return static_cast<int>(stages.size()); }
};

/// Whether a trace's first actions paid its process's one-time costs.
enum class FirstActions
{
    StartUp, ///< the trace starts with the training process (a run Bubblescope trained): ColdCost
    Steady, ///< a window profiled after warm-up steps (an imported Kineto job): every action in the mean
};

/// Averages the compute-lane events of `trace` per stage and kind. Errors when the trace has no
/// events, names a stage >= `stages`, or some stage has no forward or no backward recorded (its
/// costs would be unknown). `stages` <= 0 takes the trace's meta().stages. With
/// FirstActions::Steady no ColdCost is measured (the first action is one more sample).
Result<MeasuredCosts> measuredCosts(
    const profiler::TraceSnapshot& trace, int stages = 0, FirstActions first = FirstActions::StartUp);

/// `model` with its action times replaced by `measured` (bytes and memory figures kept). When the
/// stage counts match, stage s gets stage s's times; otherwise every stage gets the measured total
/// over stages divided by the new stage count (the layers are re-split evenly). Compute times (F,
/// I, W) are multiplied by `computeScale` (e.g. new micro-batch size / measured one); updates and
/// the one-time ColdCost are not. The transfer time becomes the measured Send mean (0 when none was recorded) with no
/// bandwidth term.
CostModel withMeasuredTimes(CostModel model, const MeasuredCosts& measured, double computeScale = 1.0);

} // namespace bs::runtime
