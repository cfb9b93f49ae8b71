#pragma once
// `--reference`: the same GPT (same shape, seed, hence the same initial weights as any pipeline
// partition) trained without a pipeline: each global batch runs its m micro-batches one after the
// other with gradient accumulation (loss · 1/m), then one stock torch::optim::AdamW step with the
// same hyper-parameters and LR schedule. It is the oracle the synchronous schedules must match.
// Torch-free header (pimpl).

#include "runtime/train/model/model_options.h"

#include <memory>

namespace bs::runtime {

class ReferenceTrainer
{
public:
    /// `options.stages`, `weights` and `updateEvery` are ignored.
    static Result<ReferenceTrainer> create(const ModelOptions& options, TokenFn tokens);
    ReferenceTrainer(ReferenceTrainer&&) noexcept;
    ReferenceTrainer& operator=(ReferenceTrainer&&) noexcept;
    ~ReferenceTrainer();

    /// Trains on micro-batches [firstMicrobatch, firstMicrobatch + microbatches) as one global
    /// batch; returns their mean loss. ErrorCode::Diverged on a non-finite loss.
    Result<double> trainBatch(std::int64_t firstMicrobatch, int microbatches);
    Result<double> evaluate(const std::vector<TokenBatch>& batches);
    std::int64_t parameterCount() const;

private:
    struct Impl;
    explicit ReferenceTrainer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace bs::runtime
