#pragma once
// The synchronizer of a classic flush pipeline: gradients accumulate over the m micro-batches of
// a global batch; after the pipeline drains, every stage takes one stock AdamW step.
#include <torch/optim/adamw.h>

#include <vector>

class FlushSynchronizer
{
public:
    FlushSynchronizer(const std::vector<torch::Tensor>& params, double lr, int microbatches)
        : m_optimizer(params, torch::optim::AdamWOptions(lr).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.1))
        , m_microbatches(microbatches)
    {}
    double lossScale() const { return 1.0 / m_microbatches; }
    void afterBackward() {} // nothing until the flush
    void afterFlush()
    {
        m_optimizer.step();
        m_optimizer.zero_grad();
    }

private:
    torch::optim::AdamW m_optimizer;
    int m_microbatches;
};
