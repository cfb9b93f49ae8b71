#pragma once
// The shape of the built-in GPT, shared by the cost model (what-if predictions) and the LibTorch
// runtime (real training), so both split the model into stages the same way.

#include "base/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bs {

struct GptShape
{
    int layers = 8;
    int dModel = 128;
    int heads = 4;
    int seqLen = 64;
    int vocab = 256;
    bool tiedHead = false; ///< the paper (and our default) keeps the LM head untied
    double dropout = 0.0;
    /// How the runtime keeps what a block saves for backward (memory estimates: pre-flight, the
    /// simulator's peaks). Not model-shape fields of a config: the run's precision and LibTorch.
    int activationBytes = 4; ///< element size of the matmul in/outputs: 4 fp32, 2 bf16 (autocast)
    bool fusedAttention = false; ///< scaled_dot_product_attention (LibTorch 2.x): no (T, T) scores kept

    std::int64_t blockParams() const; ///< parameters of one transformer block
    std::int64_t embeddingParams() const; ///< token + position embeddings
    std::int64_t headParams() const; ///< final LayerNorm + LM head
    std::int64_t totalParams() const;

    /// Forward FLOPs for `microBatch` sequences (matmuls only; 2 FLOPs per multiply-add).
    double blockForwardFlops(int microBatch) const;
    double headForwardFlops(int microBatch) const;
    /// Bytes one block keeps for backward, per micro-batch, counting its input (the LayerNorm's)
    /// and not its output (the next block's or the final LayerNorm's input, or the one the stage hands on).
    /// fp32 is the tensor-by-tensor count of our block (gpt_modules.cpp) as the CPU allocator
    /// measures it (memory_tracker.h; tests/runtime/train/exec/memory_prediction_test.cpp): the two
    /// LayerNorm inputs, 14·s·b·h matmul in/outputs, the LayerNorms' mean and rstd, and the
    /// attention's softmax output and causal mask (T, T scores) or, fused, its output and fp32
    /// log-sum-exp; with dropout its noise tensors. Korthikanti et al. 2022's published count
    /// (34·s·b·h + 5·a·s²·b at 2 bytes) held the scores three times and the dropout masks of a
    /// model without dropout: +15 % at the tiny model's stage 0. bf16 (autocast) keeps the count
    /// checked on GPUs: the published one at 2 bytes, the two LayerNorm inputs on the fp32 residual
    /// stream (2·(4 − e)·s·b·h), and each forward's bf16 copy of the matrix weights (2·12·h²);
    /// fused, 40·s·b·h + 4·a·s·b + 24·h² (docs/ARCHITECTURE.md, GPU path).
    std::int64_t blockActivationBytes(int microBatch) const;
    /// Bytes of the hidden state a stage hands on (fp32 residual stream in either precision).
    std::int64_t hiddenBytes(int microBatch) const;
    /// Bytes the LM head and loss keep: the fp32 log-softmax and the targets (bf16: and the logits).
    std::int64_t headActivationBytes(int microBatch) const;
    /// Bytes the final LayerNorm keeps: its fp32 input, mean and rstd, and its output where the head
    /// on its stage keeps it as the matmul's input (otherwise the output is the one the stage hands on).
    std::int64_t finalNormActivationBytes(int microBatch, bool headFollows) const;
    /// Bytes the embedding keeps: the token ids its backward scatters into.
    std::int64_t embeddingActivationBytes(int microBatch) const;
    /// Bytes a backward allocates on top of what the stage holds, at its worst moment (counted once
    /// per stage: one action runs at a time): in a block the MLP's gradients and the fc weight's
    /// gradient before it is added to .grad, 4·(5·s·b·h + 4·h²); at the head 16·s·b·h, or the
    /// last block's with the head weight's gradient and without what the head has released by
    /// then. Measured on the CPU at two widths and two micro-batch sizes (fp32); bf16 counted alike.
    std::int64_t backwardWorkingBytes(int microBatch, bool hasBlocks, bool hasEmbedding, bool hasHead) const;
};

/// Named presets: "tiny" (CPU demo), "small", "gpt2-medium" (the paper's model: 24 layers, d 1024,
/// 16 heads, seq 1024, vocab 50257).
Result<GptShape> gptPreset(const std::string& name);
std::vector<std::string> gptPresetNames();

/// The partition's granularity (the units the PACI authors' partitioner groups): unit 0 = token +
/// position embeddings, units 1..layers = the blocks, layers + 1 = the final LayerNorm, layers + 2 =
/// the LM head and the loss. Stages take contiguous runs of units, at least one each.
int layerUnitCount(const GptShape& shape);
/// "embedding", "block 3", "final norm", "head": for tables and messages.
std::string layerUnitName(const GptShape& shape, int unit);

/// Which layers each stage holds. Stage 0 also holds the embeddings, the last stage the head and
/// loss. Blocks are assigned contiguously so the largest per-stage forward cost is minimal.
struct StagePartition
{
    std::vector<int> firstLayer; ///< per stage
    std::vector<int> layerCount; ///< per stage (may be 0 when p > layers)
    std::vector<int> unitCount; ///< per stage, in layer units (layerUnitCount()); sums to layers + 3
    int finalNormStage = 0; ///< the stage holding the final LayerNorm: the last, or the one before a head-only stage
};

/// Balanced partition by forward cost; `explicitCounts` (one per stage, summing to layers)
/// overrides it. Errors name the field.
Result<StagePartition> partitionLayers(
    const GptShape& shape, int stages, int microBatch, const std::vector<int>& explicitCounts = {});

/// The partition given as layer units per stage (each >= 1, summing to layerUnitCount()). Errors
/// name `field` (pipeline.partition).
Result<StagePartition> partitionFromUnits(const GptShape& shape, int stages, const std::vector<int>& unitCounts,
    const std::string& field = "pipeline.partition");

} // namespace bs
