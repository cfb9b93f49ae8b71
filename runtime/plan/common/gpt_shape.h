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

    std::int64_t blockParams() const;     ///< parameters of one transformer block
    std::int64_t embeddingParams() const; ///< token + position embeddings
    std::int64_t headParams() const;      ///< final LayerNorm + LM head
    std::int64_t totalParams() const;

    /// Forward FLOPs for `microBatch` sequences (matmuls only; 2 FLOPs per multiply-add).
    double blockForwardFlops(int microBatch) const;
    double headForwardFlops(int microBatch) const;
    /// fp32 activation bytes one block keeps for backward, per micro-batch (Korthikanti et al.
    /// 2022 count, 34·s·b·h + 5·a·s²·b elements, scaled to 4-byte floats).
    std::int64_t blockActivationBytes(int microBatch) const;
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
Result<StagePartition> partitionLayers(const GptShape& shape, int stages, int microBatch,
                                       const std::vector<int>& explicitCounts = {});

/// The partition given as layer units per stage (each >= 1, summing to layerUnitCount()). Errors
/// name `field` (pipeline.partition).
Result<StagePartition> partitionFromUnits(const GptShape& shape, int stages, const std::vector<int>& unitCounts,
                                          const std::string& field = "pipeline.partition");

} // namespace bs
