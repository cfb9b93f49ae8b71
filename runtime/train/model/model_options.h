#pragma once
// Settings and plain data of the LibTorch GPT runtime. No torch here: the executor, the run
// session and the CLI include this header.

#include "base/result.h"
#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/schedule/schedule.h"
#include "runtime/train/model/memory_tracker.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace bs::runtime {

/// AdamW + LR schedule; defaults are the paper's (betas 0.9/0.95, eps 1e-8, decay 0.1 on
/// matrices only, linear warm-up then cosine decay to 10 % of the peak).
struct OptimizerOptions
{
    double lr = 3e-4;
    double beta1 = 0.9;
    double beta2 = 0.95;
    double eps = 1e-8;
    double weightDecay = 0.1;
    int warmupSteps = 0; ///< in updates
    int totalSteps = 0; ///< updates until the cosine floor; 0 = constant after warm-up
    double minLrRatio = 0.1;
    int updatesOffset = 0; ///< added to the update count before the schedule is read (paci::LrSchedule)
};

/// One micro-batch of tokens: b sequences of T, row-major; targets are inputs shifted by one.
struct TokenBatch
{
    int batch = 0;
    int seq = 0;
    std::vector<std::int32_t> inputs; ///< b·T
    std::vector<std::int32_t> targets; ///< b·T
};

/// Supplies micro-batch `globalMicrobatch` (0, 1, ...): must be a pure function of the index so
/// every schedule and the reference trainer see the same data.
using TokenFn = std::function<Result<TokenBatch>(std::int64_t globalMicrobatch)>;

struct ModelOptions
{
    GptShape shape;
    int stages = 8; ///< p
    int microBatchSize = 2; ///< b
    std::vector<int> layersPerStage; ///< explicit partition; empty = balanced by cost
    /// Explicit partition in layer units (gpt_shape.h layerUnitCount()); non-empty wins over layersPerStage.
    std::vector<int> unitsPerStage;
    std::uint64_t seed = 1234; ///< weights (per layer) and dropout
    WeightPolicy weights = WeightPolicy::Flush;
    /// Micro-batches whose gradients one update applies: m for sync schedules and 2bw, a for
    /// paci, 1 for pipedream / async-1f1b. The last stage scales the loss by 1/updateEvery.
    int updateEvery = 8;
    OptimizerOptions optimizer;
    /// Drift sampling (see bubblescope/paci/local_accumulator.h): 0 = off, N = every N-th micro-batch.
    int driftSampleEvery = 0;
    /// Multi-process runs: >= 0 builds only this stage's weights and optimizer (a rank holds one
    /// stage, not the whole model); the other stages exist as empty slots that must not run.
    /// -1 (default): every stage.
    int onlyStage = -1;
    /// Multi-process runs of multi-stage ranks (interleaved, V): non-empty builds exactly these
    /// stages (the v chunks of one rank) and wins over onlyStage; the others are empty slots.
    std::vector<int> heldStages;
    /// CUDA device of each stage (−1 = the CPU); empty = every stage on the CPU. Activations and
    /// gradients are copied to the receiving stage's device. The reference trainer uses stage 0's.
    std::vector<int> stageDevice;
    /// Mixed precision: forward passes autocast to bf16 (matmuls, attention), while weights,
    /// gradients and AdamW state stay fp32 (the master copy LocalAccumulator updates).
    bool bf16 = false;
    /// Activation recompute: F runs under no-grad and keeps only the stage's input (and the last
    /// stage's targets); B / I run the forward again with grad first, on the weights the stage
    /// holds then (stash policies: the forward's version; in-place PACI: possibly newer, counted in
    /// StageMetrics::recomputesOnNewerWeights). Dropout masks are replayed (the CPU generator's state).
    bool recompute = false;

    /// Whether this process builds and runs `stage` (heldStages, else onlyStage, else every stage).
    bool holds(int stage) const
    {
        if (!heldStages.empty()) {
            return std::find(heldStages.begin(), heldStages.end(), stage) != heldStages.end();
        }
        return onlyStage < 0 || stage == onlyStage;
    }
    /// Whether this process holds every stage (validation passes need them all).
    bool holdsEveryStage() const
    {
        return heldStages.empty() ? onlyStage < 0 : static_cast<int>(heldStages.size()) >= stages;
    }

    int deviceOf(int stage) const
    {
        return stage >= 0 && stage < static_cast<int>(stageDevice.size()) ? stageDevice[static_cast<std::size_t>(stage)]
                                                                          : -1;
    }
};

/// What one F/B/I/W did, for the trace.
struct StepInfo
{
    std::int64_t sendBytes = 0; ///< tensor handed to the neighbour stage
    std::int64_t activationBytes = 0; ///< F: growth of the stage's activation memory
};

} // namespace bs::runtime
