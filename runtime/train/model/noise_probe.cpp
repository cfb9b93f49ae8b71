#include "runtime/train/model/noise_probe_p.h"

#include <cmath>

namespace bs::runtime::detail {

namespace {

torch::Tensor squaredNorm(const std::vector<torch::Tensor>& tensors)
{
    std::vector<torch::Tensor> norms;
    norms.reserve(tensors.size());
    for (const torch::Tensor& t : tensors) {
        if (t.defined()) {
            norms.push_back(at::linalg_vector_norm(t, 2)); // no temporary of the tensor's size
        }
    }
    if (norms.empty()) {
        return torch::zeros({}, torch::kFloat64);
    }
    return torch::stack(norms).to(torch::kFloat64).square().sum();
}

} // namespace

torch::Tensor gradSquaredNorm(const std::vector<torch::Tensor>& params)
{
    std::vector<torch::Tensor> grads;
    grads.reserve(params.size());
    for (const torch::Tensor& p : params) {
        grads.push_back(p.grad());
    }
    return squaredNorm(grads);
}

void NoiseProbe::afterBackward(const std::vector<torch::Tensor>& params, int countedBefore, int window)
{
    if (window < 2) {
        return; // a = 1: pairs, counted by record()
    }
    if (countedBefore == 0 && m_backwardsUntilSmall <= 0) {
        m_smallSq = gradSquaredNorm(params);
        m_backwardsUntilSmall = kBackwardsPerSmallGradient;
    }
    --m_backwardsUntilSmall;
}

void NoiseProbe::appendReads(const std::vector<torch::Tensor>& params, std::vector<torch::Tensor>& reads)
{
    if (m_smallSq.defined()) {
        reads.push_back(m_smallSq);
        return;
    }
    m_pairSummed = false;
    if (!m_pairOpen || m_pair.size() != params.size()) {
        return;
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (params[i].grad().defined()) {
            m_pair[i].add_(params[i].grad()); // in place: the pair's buffer is ours
        }
    }
    m_pairSummed = true;
    reads.push_back(squaredNorm(m_pair));
}

void NoiseProbe::record(const std::vector<torch::Tensor>& params, const double* values, double gradScale,
    int microbatches, int microBatchSize)
{
    const double b = static_cast<double>(microBatchSize);
    if (m_smallSq.defined()) {
        m_smallSq = torch::Tensor();
        if (microbatches >= 2 && gradScale > 0.0) {
            // .grad = gradScale · Σ g_i: the first alone is g_1·gradScale, the window's mean Σg_i/k.
            const double big = gradScale * microbatches;
            m_averager.add(values[1] / (gradScale * gradScale), b, values[0] / (big * big), b * microbatches);
        }
        return;
    }
    if (microbatches != 1 || gradScale <= 0.0) {
        m_pairOpen = false;
        return;
    }
    const double sq = values[0] / (gradScale * gradScale);
    if (m_pairSummed) { // the second of the pair: |(g_1 + g_2)/2|² over 2b samples
        const double pairSq = values[1] / (4.0 * gradScale * gradScale);
        m_averager.add(0.5 * (m_pairFirstSq + sq), b, pairSq, 2.0 * b);
        m_pairOpen = false;
        m_pairSummed = false;
        return;
    }
    if (m_updatesUntilPair > 0) {
        --m_updatesUntilPair;
        m_pairOpen = false;
        return;
    }
    m_updatesUntilPair = kUpdatesPerPair - 2; // this update and the pair's second are two of them
    if (m_pair.size() != params.size()) {
        m_pair.clear();
        for (const torch::Tensor& p : params) {
            m_pair.push_back(torch::zeros_like(p));
        }
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (params[i].grad().defined()) {
            m_pair[i].copy_(params[i].grad());
        } else {
            m_pair[i].zero_();
        }
    }
    m_pairFirstSq = sq;
    m_pairOpen = true;
}

void NoiseProbe::restart()
{
    m_smallSq = torch::Tensor();
    m_pairOpen = false;
    m_pairSummed = false;
    m_updatesUntilPair = 0;
    m_backwardsUntilSmall = 0;
}

} // namespace bs::runtime::detail
