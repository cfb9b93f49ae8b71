#pragma once
// How long each action takes on each stage, how long a transfer takes, and what a stage holds in
// memory. Either explicit (--cost F,I,W[,U] --comm C) or derived from a GPT shape and a device
// profile, so users can ask what GPT-2 Medium on 8 H100s would do.

#include "base/result.h"
#include "base/time.h"
#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/schedule/action.h"

#include <cmath>
#include <string>
#include <vector>

namespace bs::runtime {

/// What the first action of each kind on a stage takes beyond its steady time, once per
/// simulation: the one-time costs a training process pays (allocator growth, intra-op thread
/// start-up, first-call kernel selection). Measured runs have them (measured_costs.h: the first
/// tiny-GPT forward on stage 0 took 1.0-1.2 ms against a steady 0.14 ms); device profiles do not
/// (all 0). Micro-batch 0's actions are on the critical path of every schedule, so these delay
/// the whole run, which a per-action mean cannot show.
struct ColdCost
{
    TimeNs forward = 0;
    TimeNs backwardInput = 0; ///< a stage's first B pays backwardInput + backwardWeight
    TimeNs backwardWeight = 0;
    TimeNs update = 0;

    /// All four extras: what a stage's start-up adds to a run once.
    TimeNs total() const { return forward + backwardInput + backwardWeight + update; }
    bool any() const { return forward > 0 || backwardInput > 0 || backwardWeight > 0 || update > 0; }
};

struct StageCost
{
    TimeNs forward = 0;
    TimeNs backwardInput = 0; ///< I; a full backward B costs I + W
    TimeNs backwardWeight = 0; ///< W
    TimeNs update = 0; ///< U
    /// An overlapped F&B pair (DualPipeV) whose forward runs on this stage, both halves together;
    /// 0 = no overlap gain: the forward plus the other stage's full backward.
    TimeNs forwardBackward = 0;
    std::int64_t activationBytes = 1; ///< per in-flight micro-batch (1 = "micro-batch units")
    std::int64_t sendBytes = 0; ///< activation / gradient handed to a neighbour
    std::int64_t paramBytes = 0; ///< one copy of this stage's weights
    /// Activation recompute (recompute_costs.h): one micro-batch's full activations, held only
    /// while its backward runs; counted once on top of the in-flight inputs.
    std::int64_t recomputeBytes = 0;
    /// What a backward allocates on top of the held activations at its worst moment (gradients,
    /// a weight's gradient before it is added to .grad): counted once, as a stage runs one action
    /// at a time (GptShape::backwardWorkingBytes; 0 where unknown).
    std::int64_t workingBytes = 0;
    ColdCost cold; ///< one-time extras of the stage's first actions (0 = none)

    /// The steady time of an action of `kind` (ColdCost is added by the executor, once).
    TimeNs duration(ActionKind kind) const;
};

struct CostModel
{
    std::vector<StageCost> stages;
    TimeNs commLatency = 0; ///< per transfer
    double commBytesPerSecond = 0; ///< 0 = bandwidth not modelled
    bool bytesKnown = false; ///< true when derived from a model: memory is reported in bytes

    TimeNs commTime(std::int64_t bytes) const;

    /// The same costs on every stage. Times in ns.
    static CostModel uniform(
        int stages, TimeNs forward, TimeNs backwardInput, TimeNs backwardWeight, TimeNs update = 0, TimeNs comm = 0);
};

/// Peak throughput and an efficiency curve: eff(flops) = maxEff · flops / (flops + halfFlops), so
/// small matmuls run far below peak, as they do.
struct DeviceProfile
{
    std::string name;
    double peakFlops = 1e12; ///< per second
    double maxEfficiency = 0.5; ///< fraction of peak reached by large kernels
    double halfFlops = 1e9; ///< kernel size (FLOPs) at which half of maxEfficiency is reached
    double memoryBytesPerSecond = 1e11; ///< device memory bandwidth (bounds the optimizer step)
    double linkBytesPerSecond = 25e9; ///< stage-to-stage bandwidth
    TimeNs linkLatency = 10 * kNsPerUs;
    /// Where the numbers come from (data sheet, fit, or measurement), shown by `simulate --json`,
    /// `tune` and the docs: a profile is a guess until `tune --calibrate RUN_DIR` replaces it.
    std::string source;
};

/// "cpu", "a100", "h100", "h200". Errors list the allowed names.
Result<DeviceProfile> deviceProfile(const std::string& name);
std::vector<std::string> deviceProfileNames();

/// Costs for `shape` split over `stages` with `microBatch` sequences per micro-batch. Backward
/// input- and weight-gradient each cost one forward; the update streams the AdamW state once.
Result<CostModel> costModelFromGpt(const GptShape& shape, int stages, int microBatch, const DeviceProfile& device);

/// The same costs over a given split in layer units per stage (gpt_shape.h layerUnitCount():
/// embedding, each block, final norm, head), so a different partition is predicted before a run.
/// Each block and the head are timed as above; the embedding and the final norm cost no time
/// (gathers and a LayerNorm: no matmuls to time) but their bytes. With the FLOPs split
/// (partitionLayers' unitCount) it equals costModelFromGpt. Errors name pipeline.partition.
Result<CostModel> costModelFromUnits(
    const GptShape& shape, const std::vector<int>& unitsPerStage, int microBatch, const DeviceProfile& device);

/// Longest action or transfer a hand-written cost may take: 1000 s. Times are integer nanoseconds,
/// and this keeps sums over 10^5 micro-batches x 256 stages far inside 64 bits.
inline constexpr double kMaxActionMs = 1e6;

/// Parses "F,I,W[,U]" in milliseconds (decimals allowed), each and `commMs` finite in
/// [0, kMaxActionMs]. Errors name the field and the format.
Result<CostModel> costModelFromString(const std::string& costs, int stages, double commMs);

inline TimeNs StageCost::duration(ActionKind kind) const
{
    switch (kind) {
    case ActionKind::Forward:
        return forward;
    case ActionKind::Backward:
        return backwardInput + backwardWeight;
    case ActionKind::BackwardInput:
        return backwardInput;
    case ActionKind::BackwardWeight:
        return backwardWeight;
    case ActionKind::Update:
        return update;
    case ActionKind::OverlapForwardBackward:
        return forwardBackward; // 0: the executor adds the halves
    }
    return 0;
}

inline TimeNs CostModel::commTime(std::int64_t bytes) const
{
    TimeNs t = commLatency;
    if (commBytesPerSecond > 0 && bytes > 0) {
        t += static_cast<TimeNs>(std::llround(static_cast<double>(bytes) / commBytesPerSecond * 1e9));
    }
    return t;
}

} // namespace bs::runtime
