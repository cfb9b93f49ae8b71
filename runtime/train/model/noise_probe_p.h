#pragma once
// Private to runtime/train/model (includes torch): the gradient noise scale measured on a stage's
// own gradients (runtime/plan/common/noise_scale.h), at no extra host synchronisation.
//
// Small gradient: the window's first backward adds its micro-batch's gradient to .grad, which the
// update zeroed, so |.grad|² right after it is that micro-batch's gradient alone (B_small = b
// samples). Big gradient: .grad at the update, the window's sum (B_big = k·b for the k micro-
// batches it applies: a for PACI, m for flush). The loss is scaled by 1/updateEvery, so both are
// rescaled to gradients of mean losses. The small gradient's norm is one more read of the
// stage's gradients, cold after the backward: windows start one at most every
// kBackwardsPerSmallGradient micro-batches (every window from a = 4 on, every other at a = 2,
// whose b-vs-2b estimate is the noisiest anyway). A window of one micro-batch (a = 1: async-1f1b,
// pipedream) has no second size: its updates are paired instead, the first update's gradients
// kept and added to the second's (B_small = b, B_big = 2b, the two on weights one update apart),
// one pair in every kUpdatesPerPair updates: a copy and an add of the stage's gradients per pair
// cost 4.7 % of a CPU step of the tiny GPT when every update was paired, 0.3-0.5 % so
// (tests/bench/noise_probe_bench.cpp, docs/BENCHMARKS.md).
// The norms stay on the device until the update reads them together with the gradients' finite
// check (one transfer per update, as before).

#include "runtime/plan/common/noise_scale.h"

#include <torch/torch.h>

#include <vector>

namespace bs::runtime::detail {

/// Σ |p.grad|² over `params` with a gradient, as a float64 scalar where the gradients live (a
/// CPU zero when none has one).
torch::Tensor gradSquaredNorm(const std::vector<torch::Tensor>& params);

class NoiseProbe
{
public:
    explicit NoiseProbe(int stage = 0)
        : m_averager(stage)
    {}

    /// After a backward that added to the weight gradients, before the accumulator counts it
    /// (`countedBefore` backward passes in the window so far; `window` = updateEvery).
    void afterBackward(const std::vector<torch::Tensor>& params, int countedBefore, int window);
    /// The device scalars the update reads besides the big gradient's squared norm (appended to
    /// `reads`; pass their host values to record() in the same order).
    void appendReads(const std::vector<torch::Tensor>& params, std::vector<torch::Tensor>& reads);
    /// One update's figures: `values` = the host values of [|grad|², what appendReads() added].
    /// `gradScale`: the loss scale (1/updateEvery); `microbatches` the update applies of
    /// `microBatchSize` samples each. Keeps the first of a pair's gradients (a = 1).
    void record(const std::vector<torch::Tensor>& params, const double* values, double gradScale, int microbatches,
        int microBatchSize);
    /// Forgets a half-measured window or pair (a live Apply changed the window).
    void restart();

    const NoiseScaleAverager& averager() const { return m_averager; }

    /// a = 1: updates per measured pair (the pair's two and the ones skipped after it).
    static constexpr int kUpdatesPerPair = 32;
    /// Windows of >= 2: the fewest micro-batches between two measured small gradients.
    static constexpr int kBackwardsPerSmallGradient = 4;

private:
    NoiseScaleAverager m_averager;
    torch::Tensor m_smallSq; ///< the window's first micro-batch, until its update reads it
    std::vector<torch::Tensor> m_pair; ///< a = 1: the first update's gradients, then their sum with the second's
    bool m_pairOpen = false; ///< m_pair holds the first update's gradients
    bool m_pairSummed = false; ///< appendReads() added the second's to them
    double m_pairFirstSq = 0.0; ///< |g_1|² of the open pair
    int m_updatesUntilPair = 0; ///< a = 1: updates to skip before the next pair opens
    int m_backwardsUntilSmall = 0; ///< windows of >= 2: backward passes before the next small gradient
};

} // namespace bs::runtime::detail
