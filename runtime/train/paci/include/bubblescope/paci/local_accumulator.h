#pragma once
// PACI's local accumulation, as a drop-in replacement for the flush synchronizer of a LibTorch
// pipeline trainer. One LocalAccumulator per pipeline stage; depends on LibTorch only.
//
// Use (per stage):
//     bs::paci::LocalAccumulator acc(stage->parameters(), options);   // options.accum = a
//     ... forward:   auto tag = acc.tagForward(mb);                    // optional instrumentation
//     ... last stage: (loss * acc.lossScale()).backward();             // loss scaled by 1/a
//     ... backward:  acc.observeBackward(tag); out.backward(grad); acc.afterBackward();
//
// afterBackward() counts this stage's backward passes; after the a-th, 2a-th, ... it applies
// AdamW in place, steps the LR schedule and zeroes the gradients — with no flush and no barrier.
//
// What a late backward sees. The update writes through Tensor::data(), a view of the parameter's
// storage that has its OWN autograd version counter, so the parameter's counter is not bumped and
// autograd does not reject the backward of a micro-batch whose forward ran before the update
// (stock torch::optim::AdamW::step() bumps it, and that backward then throws "one of the variables
// needed for gradient computation has been modified by an inplace operation"). Such a backward
// then reads:
//   * at the FORWARD-time version: every activation autograd saved during the forward — a Linear's
//     input (used for its weight gradient), LayerNorm's normalised input / mean / rstd, the
//     attention probabilities, GELU's input, the embedding indices. These are tensors the forward
//     computed from the old weights, so weight gradients are "old activations × incoming grad".
//   * at the UPDATED version: every parameter tensor autograd saved by reference — a Linear's
//     weight (used for the input gradient it sends upstream), a LayerNorm's weight (for its input
//     gradient). Gradients sent to the previous stage are therefore computed with the new weights.
//   * the incoming output gradient is whatever the next stage sent (computed on its version).
// Gradients accumulate into .grad, which the update zeroed, so a late backward's gradient counts
// toward the window after the update (update k applies the backward passes ka−a+1 … ka in the
// order they completed). With a ≥ p − s − 1 + k every micro-batch crosses at most one update.
// This matches the PACI authors' patched PyTorch (freeze_version_update around optimizer.step())
// in fp32. Thread-safety: none; use one accumulator from one thread at a time.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "bubblescope/paci/lr_schedule.h"

namespace bs::paci {

/// AdamW hyper-parameters (the paper's defaults). The learning rate comes from LrSchedule.
struct AdamWOptions
{
    double beta1 = 0.9;
    double beta2 = 0.95;
    double eps = 1e-8;
    double weightDecay = 0.1; ///< decoupled; applied only to parameters with dim() >= 2
};

struct AccumulatorOptions
{
    int accum = 8; ///< a: local backward passes per update (≥ 1)
    AdamWOptions adamw;
    LrSchedule lr; ///< stepped once per update
    /// true: afterBackward() applies the update itself after every a-th backward (drop-in use).
    /// false: afterBackward() only counts; the caller calls step() when updateDue() (a runtime
    /// that draws the update as its own action on a timeline).
    bool autoStep = true;
    /// Drift sampling: 0 = off; N > 0 = tagForward() keeps a copy of the parameters for every
    /// N-th tagged micro-batch (the 1st, N+1-th, ...) so observeBackward() can measure
    /// ‖θ_B − θ_F‖ / ‖θ_F‖. Pick N coprime with a (e.g. a + 1) to sample every window position.
    /// A sample costs one parameter copy held from forward to backward.
    int driftSampleEvery = 0;
};

/// What tagForward() returns; keep it with the micro-batch until its backward.
struct ForwardTag
{
    std::int64_t microbatch = -1;
    int version = 0; ///< updates the stage had applied when the forward ran
    /// Parameters at forward time, only for sampled micro-batches (released with the tag).
    std::shared_ptr<const std::vector<at::Tensor>> snapshot;
};

struct BackwardObservation
{
    int lag = 0; ///< updates applied between the forward and this backward
    std::optional<double> drift; ///< ‖θ_B − θ_F‖ / ‖θ_F‖ for sampled micro-batches
};

struct DriftStats
{
    std::vector<std::int64_t> lagHistogram; ///< [k] = backward passes that crossed k updates
    int maxLag = 0;
    std::int64_t driftSamples = 0;
    double driftSum = 0.0;
    double driftMax = 0.0;

    double meanDrift() const { return driftSamples > 0 ? driftSum / static_cast<double>(driftSamples) : 0.0; }
};

/// Everything an accumulator carries between two windows that a resumed run needs to continue
/// exactly (checkpoint and resume): the AdamW moments and per-parameter step counts, the update
/// count (version), the drift-sampling position and the lag / drift statistics. The parameters
/// themselves belong to the caller. Taken only between windows (no backward counted).
struct AccumulatorState
{
    std::vector<at::Tensor> expAvg; ///< one per parameter, the parameter's shape
    std::vector<at::Tensor> expAvgSq;
    std::vector<std::int64_t> steps; ///< AdamW steps per parameter (bias correction)
    int version = 0;
    std::int64_t tagged = 0; ///< forwards tagged so far (drift sampling position)
    DriftStats stats;
};

class LocalAccumulator
{
public:
    /// `parameters`: the stage's leaf tensors (requires_grad). Allocates the AdamW moments
    /// (2 × parameter bytes) up front, so a stage's memory does not jump at the first update.
    LocalAccumulator(std::vector<at::Tensor> parameters, AccumulatorOptions options);
    ~LocalAccumulator();
    LocalAccumulator(LocalAccumulator&&) noexcept;
    LocalAccumulator& operator=(LocalAccumulator&&) noexcept;
    LocalAccumulator(const LocalAccumulator&) = delete;
    LocalAccumulator& operator=(const LocalAccumulator&) = delete;

    /// 1/a: multiply the loss by this so the a micro-batches' gradients sum to their mean.
    double lossScale() const;

    /// Counts one completed local backward pass. With autoStep, applies step() when the count
    /// reaches a. Returns true when this call completed a window (the update was applied with
    /// autoStep, or is now due without it).
    bool afterBackward();
    /// True when a backward passes were counted since the last update and step() has not run.
    bool updateDue() const;
    /// Applies the update now, whatever the count: AdamW in place on the parameters' data (no
    /// version-counter bump), LR schedule step, gradients zeroed, count reset, version + 1.
    /// Parameters without a gradient are skipped (as in torch::optim::AdamW).
    void step();

    /// Replaces the options (window a, LR schedule, drift sampling) between two windows, keeping
    /// the AdamW moments, the version and the statistics: a live run that changes its settings at
    /// a batch boundary. Throws std::invalid_argument when backward passes are counted in the
    /// current window or the options are invalid.
    void reconfigure(const AccumulatorOptions& options);

    /// A copy of the state (exportState) or its replacement (importState), between two windows.
    /// Both throw std::invalid_argument when backward passes are counted in the current window;
    /// importState also when the tensor count or a shape differs from the parameters'.
    AccumulatorState exportState() const;
    void importState(const AccumulatorState& state);

    int version() const; ///< updates applied so far
    int accum() const; ///< a
    int backwardsSinceUpdate() const; ///< backward passes counted in the current window
    double nextLr() const; ///< learning rate the next update will use
    const std::vector<at::Tensor>& parameters() const;
    const AccumulatorOptions& options() const;

    /// Records the version a micro-batch's forward sees (call at its forward on this stage).
    ForwardTag tagForward(std::int64_t microbatch);
    /// Call when the micro-batch's backward starts on this stage (before afterBackward()):
    /// its lag, and its drift when the tag holds a snapshot. Adds both to stats(). Parameters on
    /// an accelerator: the drift's sums stay on the device (drift is nullopt here) and the next
    /// stats() or exportState() reads every such sample in one transfer, since a read here
    /// would make the host wait for the device inside the caller's timed backward.
    BackwardObservation observeBackward(const ForwardTag& tag);
    /// Reads the drift samples still on the device first (one host synchronisation, if any).
    const DriftStats& stats() const;
    void resetStats();

    std::int64_t parameterBytes() const;
    std::int64_t optimizerStateBytes() const; ///< the AdamW moments

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace bs::paci
