#include "runtime/train/model/gpt_modules_p.h"

#include <ATen/ATen.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/init.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace bs::runtime::detail {

namespace {

constexpr double kInitStd = 0.02;

// GPT-2 initialisation from a per-layer seed: weights N(0, 0.02) (residual projections scaled by
// 1/sqrt(2L)), biases 0, LayerNorm 1/0. Layer index -1 = embeddings, L = head.
void seedLayer(std::uint64_t seed, int layerIndex)
{
    const std::uint64_t layer =
        layerIndex < -1 ? 0U : static_cast<std::uint64_t>(static_cast<unsigned>(layerIndex + 1));
    const std::uint64_t prime = 1'000'003U;
    torch::manual_seed(seed * prime + layer);
}

void initLinear(torch::nn::Linear& linear, double stddev)
{
    torch::NoGradGuard noGrad;
    linear->weight.normal_(0.0, stddev);
    if (linear->bias.defined()) {
        linear->bias.zero_();
    }
}

} // namespace

BlockImpl::BlockImpl(const GptShape& shape, int layerIndex)
    : m_heads(shape.heads)
    , m_dropout(shape.dropout)
{
    const std::int64_t d = shape.dModel;
    m_ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    m_qkv = register_module("qkv", torch::nn::Linear(d, 3 * d));
    m_attnProj = register_module("attn_proj", torch::nn::Linear(d, d));
    m_ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    m_fc = register_module("fc", torch::nn::Linear(d, 4 * d));
    m_mlpProj = register_module("mlp_proj", torch::nn::Linear(4 * d, d));
    m_attnDrop = register_module("attn_drop", torch::nn::Dropout(shape.dropout));
    m_residDrop = register_module("resid_drop", torch::nn::Dropout(shape.dropout));
    (void)layerIndex;
}

void BlockImpl::initWeights(double stddev, double residualStd)
{
    initLinear(m_qkv, stddev);
    initLinear(m_attnProj, residualStd);
    initLinear(m_fc, stddev);
    initLinear(m_mlpProj, residualStd);
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x)
{
    const std::int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    const std::int64_t H = m_heads, hd = C / H;
    // Attention: q, k, v (B, H, T, hd), the future masked out.
    const std::vector<torch::Tensor> qkv = m_qkv(m_ln1(x)).split(C, 2);
    const torch::Tensor q = qkv[0].view({B, T, H, hd}).transpose(1, 2);
    const torch::Tensor k = qkv[1].view({B, T, H, hd}).transpose(1, 2);
    const torch::Tensor v = qkv[2].view({B, T, H, hd}).transpose(1, 2);
#if TORCH_VERSION_MAJOR >= 2
    // LibTorch 2.x: the fused kernel (flash / memory-efficient on CUDA, a fused loop on the CPU);
    // the (B, H, T, T) scores are never materialised. Same maths as the 1.13 path below.
    const torch::Tensor att = at::scaled_dot_product_attention(q, k, v, {}, is_training() ? m_dropout : 0.0,
        /*is_causal=*/true);
    const torch::Tensor y = att.transpose(1, 2).contiguous().view({B, T, C}); // (B, T, C)
#else
    const torch::Tensor mask =
        torch::ones({T, T}, torch::TensorOptions().dtype(torch::kBool).device(x.device())).triu(1);
    torch::Tensor att = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(hd)));
    att = torch::softmax(att.masked_fill(mask, -std::numeric_limits<float>::infinity()), -1);
    att = m_attnDrop(att);
    const torch::Tensor y = torch::matmul(att, v).transpose(1, 2).contiguous().view({B, T, C}); // (B, T, C)
#endif
    torch::Tensor out = x + m_residDrop(m_attnProj(y));
    // MLP: (B, T, 4C) -> (B, T, C).
    out = out + m_residDrop(m_mlpProj(torch::gelu(m_fc(m_ln2(out)), "tanh")));
    return out;
}

GptStageImpl::GptStageImpl(const GptShape& shape, int firstLayer, int layerCount, bool hasEmbedding, bool hasHead,
    std::uint64_t seed, std::optional<bool> hasFinalNorm)
    : m_shape(shape)
    , m_hasEmbedding(hasEmbedding)
    , m_hasHead(hasHead)
    , m_hasFinalNorm(hasFinalNorm.value_or(hasHead))
{
    const std::int64_t d = shape.dModel;
    const double residStd = kInitStd / std::sqrt(2.0 * static_cast<double>(std::max(shape.layers, 1)));
    if (hasEmbedding) {
        seedLayer(seed, -1);
        m_wte = register_module("wte", torch::nn::Embedding(shape.vocab, d));
        m_wpe = register_module("wpe", torch::nn::Embedding(shape.seqLen, d));
        torch::NoGradGuard noGrad;
        m_wte->weight.normal_(0.0, kInitStd);
        m_wpe->weight.normal_(0.0, kInitStd);
    }
    m_embDrop = register_module("emb_drop", torch::nn::Dropout(shape.dropout));
    m_blocks = register_module("blocks", torch::nn::ModuleList());
    for (int i = 0; i < layerCount; ++i) {
        const int layer = firstLayer + i;
        seedLayer(seed, layer);
        Block block(shape, layer);
        block->initWeights(kInitStd, residStd);
        m_blocks->push_back(block);
    }
    if (m_hasFinalNorm) { // LayerNorm starts at (1, 0): no random draw, so splitting it from the head keeps the weights
        m_lnF = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    }
    if (hasHead) {
        seedLayer(seed, shape.layers);
        m_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(d, shape.vocab).bias(false)));
        initLinear(m_head, kInitStd);
    }
}

torch::Tensor GptStageImpl::forward(const torch::Tensor& input)
{
    torch::Tensor x = input;
    if (m_hasEmbedding) {
        const std::int64_t T = input.size(1);
        const torch::Tensor pos =
            torch::arange(T, torch::TensorOptions().dtype(torch::kLong).device(input.device())); // (T)
        x = m_embDrop(m_wte(input) + m_wpe(pos)); // (B, T, C)
    }
    for (const auto& block : *m_blocks) {
        x = block->as<Block>()->forward(x);
    }
    if (m_hasFinalNorm) {
        x = m_lnF(x);
    }
    if (m_hasHead) {
        x = m_head(x); // (B, T, V)
    }
    return x;
}

torch::Tensor GptStageImpl::loss(const torch::Tensor& logits, const torch::Tensor& targets)
{
    const std::int64_t V = logits.size(-1);
    // In fp32 whatever the forward's precision (bf16 logits: the loss and its gradient stay exact enough).
    return torch::nn::functional::cross_entropy(logits.reshape({-1, V}).to(torch::kFloat32), targets.reshape({-1}));
}

torch::Tensor tokensToTensor(const std::vector<std::int32_t>& tokens, int batch, int seq, torch::Device device)
{
    auto* data = const_cast<std::int32_t*>(tokens.data()); // from_blob wants non-const; only read
    return torch::from_blob(data, {static_cast<std::int64_t>(batch), static_cast<std::int64_t>(seq)},
        torch::TensorOptions().dtype(torch::kInt))
        .to(device, torch::kLong); // a copy: the result does not alias `tokens`
}

} // namespace bs::runtime::detail
