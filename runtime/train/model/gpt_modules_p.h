#pragma once
// Private to bs_model: the LibTorch modules of the GPT-2-style decoder. Included only by the
// model's .cpp files (torch stays out of every public header).

#include "runtime/plan/common/gpt_shape.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace bs::runtime::detail {

/// Pre-LN transformer block: x + attn(ln1(x)), then x + mlp(ln2(x)); causal self-attention,
/// tanh-GELU MLP of width 4d.
class BlockImpl : public torch::nn::Module
{
public:
    BlockImpl(const GptShape& shape, int layerIndex);
    torch::Tensor forward(const torch::Tensor& x); // (B, T, C) -> (B, T, C)
    /// GPT-2 init of the matmul weights (biases 0); residual projections get `residualStd`.
    void initWeights(double stddev, double residualStd);

private:
    int m_heads;
    double m_dropout;
    torch::nn::LayerNorm m_ln1{nullptr}, m_ln2{nullptr};
    torch::nn::Linear m_qkv{nullptr}, m_attnProj{nullptr}, m_fc{nullptr}, m_mlpProj{nullptr};
    torch::nn::Dropout m_attnDrop{nullptr}, m_residDrop{nullptr};
};
TORCH_MODULE(Block);

/// One pipeline stage: [embeddings] + blocks [first, first + count) + [final LN] + [LM head].
/// The final LN goes with the head unless `hasFinalNorm` says otherwise (a partition in layer
/// units may put it on the stage before a head-only one). Parameters are initialised per layer from (seed, layer
/// index), so any partition of the same shape and seed holds exactly the same weights (the reference trainer relies on
/// it).
class GptStageImpl : public torch::nn::Module
{
public:
    GptStageImpl(const GptShape& shape, int firstLayer, int layerCount, bool hasEmbedding, bool hasHead,
        std::uint64_t seed, std::optional<bool> hasFinalNorm = std::nullopt);

    /// Stage 0: token ids (B, T) int64; otherwise the previous stage's activation (B, T, C).
    /// Returns (B, T, C), or logits (B, T, V) on the head stage.
    torch::Tensor forward(const torch::Tensor& x);
    /// Mean cross-entropy of head logits (B, T, V) against targets (B, T) int64.
    static torch::Tensor loss(const torch::Tensor& logits, const torch::Tensor& targets);

    bool hasEmbedding() const { return m_hasEmbedding; }
    bool hasHead() const { return m_hasHead; }
    bool hasFinalNorm() const { return m_hasFinalNorm; }

private:
    GptShape m_shape;
    bool m_hasEmbedding;
    bool m_hasHead;
    bool m_hasFinalNorm;
    torch::nn::Embedding m_wte{nullptr}, m_wpe{nullptr};
    torch::nn::Dropout m_embDrop{nullptr};
    torch::nn::ModuleList m_blocks{nullptr};
    torch::nn::LayerNorm m_lnF{nullptr};
    torch::nn::Linear m_head{nullptr};
};
TORCH_MODULE(GptStage);

/// Token ids (B·T int32, row-major) as an int64 (B, T) tensor on `device`.
torch::Tensor tokensToTensor(
    const std::vector<std::int32_t>& tokens, int batch, int seq, torch::Device device = torch::kCPU);

} // namespace bs::runtime::detail
