#include "runtime/plan/common/gpt_shape.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace bs {

namespace {
std::int64_t i64(int v)
{
    return static_cast<std::int64_t>(v);
}
double f64(int v)
{
    return static_cast<double>(v);
}
} // namespace

std::int64_t GptShape::blockParams() const
{
    const std::int64_t d = i64(dModel);
    // ln1 (2d) + qkv (3d²+3d) + attn proj (d²+d) + ln2 (2d) + fc (4d²+4d) + mlp proj (4d²+d)
    return 12 * d * d + 13 * d;
}

std::int64_t GptShape::embeddingParams() const
{
    return i64(vocab) * i64(dModel) + i64(seqLen) * i64(dModel);
}

std::int64_t GptShape::headParams() const
{
    const std::int64_t lnF = 2 * i64(dModel);
    return lnF + (tiedHead ? 0 : i64(vocab) * i64(dModel));
}

std::int64_t GptShape::totalParams() const
{
    return embeddingParams() + i64(layers) * blockParams() + headParams();
}

double GptShape::blockForwardFlops(int microBatch) const
{
    const double tokens = f64(microBatch) * f64(seqLen);
    const double d = f64(dModel);
    // 12d² multiply-adds per token in the four matmuls, plus QKᵀ and AV (T·d each per token).
    return 2.0 * tokens * 12.0 * d * d + 4.0 * tokens * f64(seqLen) * d;
}

double GptShape::headForwardFlops(int microBatch) const
{
    return 2.0 * f64(microBatch) * f64(seqLen) * f64(dModel) * f64(vocab);
}

std::int64_t GptShape::blockActivationBytes(int microBatch) const
{
    const std::int64_t sb = i64(seqLen) * i64(microBatch);
    const std::int64_t sbh = sb * i64(dModel);
    const std::int64_t scores = i64(heads) * i64(seqLen) * sb; // a·s²·b
    const std::int64_t e = activationBytes;
    if (e >= 4) {
        // ln1 and ln2 inputs (2), ln1 output, q k v (3), attention output y, ln2 output, fc and GELU
        // outputs (4 each): 16 values per token and channel, fp32.
        std::int64_t bytes = 16 * 4 * sbh + 2 * 2 * 4 * sb; // and the two LayerNorms' mean and rstd
        bytes += fusedAttention ? 4 * sbh + 4 * i64(heads) * sb // scaled_dot_product_attention: output + log-sum-exp
                                : 4 * scores + i64(seqLen) * i64(seqLen); // softmax output, bool causal mask
        if (dropout > 0) { // LibTorch's CPU dropout keeps an fp32 noise tensor per dropout
            bytes += 2 * 4 * sbh + (fusedAttention ? 0 : 4 * scores);
        }
        return bytes;
    }
    const std::int64_t published = 17 * e * sbh; // 34·s·b·h elements at e bytes
    const std::int64_t residual = 2 * (4 - e) * sbh; // LayerNorm inputs: fp32 whatever e is
    const std::int64_t attention = fusedAttention ? e * sbh + 4 * i64(heads) * sb // output + log-sum-exp
                                                  : 5 * e * scores / 2; // 5·a·s²·b elements
    // Under autocast each linear's weight is cast to bf16 once per forward, and autograd keeps the
    // copy for the backward: per micro-batch in flight, e bytes per matrix weight (12·h²).
    const std::int64_t weightCopies = e * 12 * i64(dModel) * i64(dModel);
    return published + residual + attention + weightCopies;
}

std::int64_t GptShape::hiddenBytes(int microBatch) const
{
    return i64(seqLen) * i64(microBatch) * i64(dModel) * 4;
}

std::int64_t GptShape::headActivationBytes(int microBatch) const
{
    const std::int64_t sb = i64(seqLen) * i64(microBatch);
    // The fp32 log-softmax, and the int64 targets; bf16 as counted before: the logits too.
    return sb * i64(vocab) * (4 + (activationBytes < 4 ? i64(activationBytes) : 0)) + 8 * sb;
}

std::int64_t GptShape::finalNormActivationBytes(int microBatch, bool headFollows) const
{
    const std::int64_t sb = i64(seqLen) * i64(microBatch);
    // Its fp32 input (the last block's output, or the stage's received input), mean and rstd.
    return hiddenBytes(microBatch) + 2 * 4 * sb + (headFollows ? sb * i64(dModel) * i64(activationBytes) : 0);
}

std::int64_t GptShape::embeddingActivationBytes(int microBatch) const
{
    return 8 * i64(seqLen) * i64(microBatch); // int64 token ids
}

std::int64_t GptShape::backwardWorkingBytes(int microBatch, bool hasBlocks, bool hasEmbedding, bool hasHead) const
{
    const std::int64_t sbh = i64(seqLen) * i64(microBatch) * i64(dModel);
    const std::int64_t h = i64(dModel);
    const std::int64_t block = hasBlocks ? 4 * (5 * sbh + 4 * h * h) : 0;
    std::int64_t working = block;
    if (hasEmbedding) {
        working = std::max(working, 4 * (sbh + i64(vocab) * h)); // the incoming gradient, the table's dense gradient
    }
    if (hasHead) {
        // What the head has released when the last block's backward runs (its input, that block's
        // output, is counted as still held: fitted so).
        const std::int64_t headHeld =
            headActivationBytes(microBatch) + finalNormActivationBytes(microBatch, true) - hiddenBytes(microBatch);
        working = std::max(working, 16 * sbh);
        if (hasBlocks) { // the last block's backward: the head's weight gradient still live, its activations freed
            working = std::max(working, block + 4 * i64(vocab) * h - headHeld);
        }
    }
    return working;
}

Result<GptShape> gptPreset(const std::string& name)
{
    if (name == "tiny") {
        return GptShape{.layers = 8, .dModel = 128, .heads = 4, .seqLen = 64, .vocab = 256};
    }
    if (name == "small") {
        return GptShape{.layers = 16, .dModel = 256, .heads = 8, .seqLen = 128, .vocab = 256};
    }
    if (name == "deep") {
        return GptShape{.layers = 40, .dModel = 64, .heads = 4, .seqLen = 64, .vocab = 256};
    }
    if (name == "gpt2-medium") {
        return GptShape{.layers = 24, .dModel = 1024, .heads = 16, .seqLen = 1024, .vocab = 50257, .dropout = 0.1};
    }
    return makeError(ErrorCode::InvalidArgument, "unknown model preset '" + name + "'",
        "model.preset: allowed values are tiny, small, deep, gpt2-medium");
}

std::vector<std::string> gptPresetNames()
{
    return {"tiny", "small", "deep", "gpt2-medium"};
}

Result<StagePartition> partitionLayers(
    const GptShape& shape, int stages, int microBatch, const std::vector<int>& explicitCounts)
{
    if (stages < 1) {
        return makeError(ErrorCode::InvalidArgument, "stages must be at least 1", "pipeline.stages");
    }
    const int layers = shape.layers;
    StagePartition part;
    part.firstLayer.assign(static_cast<std::size_t>(stages), 0);
    part.layerCount.assign(static_cast<std::size_t>(stages), 0);
    if (!explicitCounts.empty()) {
        if (static_cast<int>(explicitCounts.size()) != stages) {
            return makeError(ErrorCode::InvalidArgument,
                "stage layer list has " + std::to_string(explicitCounts.size()) + " entries, expected "
                    + std::to_string(stages) + " (one per stage)",
                "pipeline.layers_per_stage");
        }
        const bool negative = std::any_of(explicitCounts.begin(), explicitCounts.end(), [](int c) { return c < 0; });
        if (negative || std::accumulate(explicitCounts.begin(), explicitCounts.end(), 0) != layers) {
            return makeError(ErrorCode::InvalidArgument,
                "stage layer counts must be >= 0 and sum to model.layers = " + std::to_string(layers),
                "pipeline.layers_per_stage");
        }
        part.layerCount = explicitCounts;
    } else {
        // Minimise the largest stage cost over contiguous splits, then the sum of squared stage
        // costs (so no stage is left empty when another split is as good); the head's cost sits on
        // the last stage. best[s][l]: that pair for the first l blocks on s stages.
        const double block = shape.blockForwardFlops(microBatch) / shape.blockForwardFlops(1);
        const double head = shape.headForwardFlops(microBatch) / shape.blockForwardFlops(1);
        const auto P = static_cast<std::size_t>(stages);
        const auto L = static_cast<std::size_t>(layers);
        using Cost = std::pair<double, double>; // (max stage cost, sum of squares)
        const Cost inf{std::numeric_limits<double>::infinity(), 0.0};
        std::vector<std::vector<Cost>> best(P + 1, std::vector<Cost>(L + 1, inf));
        std::vector<std::vector<std::size_t>> cut(P + 1, std::vector<std::size_t>(L + 1, 0));
        best[0][0] = {0.0, 0.0};
        for (std::size_t s = 1; s <= P; ++s) {
            const double extra = (s == P) ? head : 0.0;
            for (std::size_t l = 0; l <= L; ++l) {
                for (std::size_t k = 0; k <= l; ++k) { // stage s takes blocks [k, l)
                    const double stageCost = static_cast<double>(l - k) * block + extra;
                    const Cost cost{
                        std::max(best[s - 1][k].first, stageCost), best[s - 1][k].second + stageCost * stageCost};
                    if (cost < best[s][l]) {
                        best[s][l] = cost;
                        cut[s][l] = k;
                    }
                }
            }
        }
        std::size_t l = L;
        for (std::size_t s = P; s >= 1; --s) {
            part.layerCount[s - 1] = static_cast<int>(l - cut[s][l]);
            l = cut[s][l];
        }
    }
    int first = 0;
    for (std::size_t s = 0; s < part.layerCount.size(); ++s) {
        part.firstLayer[s] = first;
        first += part.layerCount[s];
        part.unitCount.push_back(part.layerCount[s] + (s == 0 ? 1 : 0) + (s + 1 == part.layerCount.size() ? 2 : 0));
    }
    part.finalNormStage = stages - 1;
    return part;
}

int layerUnitCount(const GptShape& shape)
{
    return std::max(shape.layers, 0) + 3;
}

std::string layerUnitName(const GptShape& shape, int unit)
{
    if (unit == 0) {
        return "embedding";
    }
    if (unit <= shape.layers) {
        return "block " + std::to_string(unit - 1);
    }
    return unit == shape.layers + 1 ? "final norm" : "head";
}

Result<StagePartition> partitionFromUnits(
    const GptShape& shape, int stages, const std::vector<int>& unitCounts, const std::string& field)
{
    const int units = layerUnitCount(shape);
    if (stages < 1) {
        return makeError(ErrorCode::InvalidArgument, "stages must be at least 1", "pipeline.stages");
    }
    if (static_cast<int>(unitCounts.size()) != stages) {
        return makeError(ErrorCode::InvalidArgument,
            field + " has " + std::to_string(unitCounts.size())
                + " entries; allowed: one per stage (pipeline.stages = " + std::to_string(stages) + ")",
            field);
    }
    long long sum = 0;
    for (std::size_t s = 0; s < unitCounts.size(); ++s) {
        if (unitCounts[s] < 1) {
            return makeError(ErrorCode::InvalidArgument,
                field + "[" + std::to_string(s) + "] = " + std::to_string(unitCounts[s])
                    + "; allowed: >= 1 (layer units: embedding, each block, final norm, head)",
                field);
        }
        sum += unitCounts[s];
    }
    if (sum != units) {
        return makeError(ErrorCode::InvalidArgument,
            field + " sums to " + std::to_string(sum)
                + "; allowed: a sum equal to the layer units, model.layers + 3 = " + std::to_string(units),
            field);
    }
    StagePartition part;
    int unit = 0;
    for (int s = 0; s < stages; ++s) {
        const int begin = unit;
        const int end = unit + unitCounts[static_cast<std::size_t>(s)]; // units [begin, end)
        // Blocks are units 1..layers: the overlap of [begin, end) with [1, layers + 1).
        const int firstBlock = std::max(begin, 1);
        const int lastBlock = std::min(end, shape.layers + 1);
        part.firstLayer.push_back(firstBlock - 1 < shape.layers ? firstBlock - 1 : shape.layers);
        part.layerCount.push_back(std::max(0, lastBlock - firstBlock));
        if (begin <= shape.layers + 1 && shape.layers + 1 < end) {
            part.finalNormStage = s;
        }
        unit = end;
    }
    // A block-free stage's first layer is where the next one starts (as partitionLayers keeps it).
    int first = 0;
    for (std::size_t s = 0; s < part.layerCount.size(); ++s) {
        part.firstLayer[s] = first;
        first += part.layerCount[s];
    }
    part.unitCount = unitCounts;
    return part;
}

} // namespace bs
