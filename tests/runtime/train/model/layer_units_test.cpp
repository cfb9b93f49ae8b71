// Partitions in layer units (embedding, blocks, final norm, head) hold the same model as the block
// partition, and the profiling pass measures every unit.
#include "runtime/train/model/pipeline_model.h"
#include "runtime/train/model/reference_trainer.h"
#include "runtime/train/model/torch_devices.h"
#include "runtime/train/model/unit_profiler.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_tokens.h"

namespace bs::runtime {
namespace {

constexpr int kP = 4;
constexpr int kM = 4;

TEST(LayerUnits, EmbeddingOnlyAndHeadOnlyStagesTrainLikeTheReference)
{
    ModelOptions o = test::tinyModelOptions(kP, kM, WeightPolicy::Flush);
    ASSERT_EQ(o.shape.layers, 4); // 7 units: embedding | blocks 0-1 | blocks 2-3 + final norm | head
    o.unitsPerStage = {1, 2, 3, 1};
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    ASSERT_TRUE(model) << model.error().describe();
    EXPECT_EQ(model->parameterCount(0), o.shape.embeddingParams());
    EXPECT_EQ(model->parameterCount(2), 2 * o.shape.blockParams() + 2 * o.shape.dModel);
    EXPECT_EQ(model->parameterCount(3), o.shape.headParams() - 2 * o.shape.dModel);
    auto ref = ReferenceTrainer::create(o, test::patternTokens(o.shape, o.microBatchSize));
    ASSERT_TRUE(ref);
    for (int n = 0; n < 3; ++n) {
        for (int i = 0; i < kM; ++i) {
            for (int s = 0; s < kP; ++s) {
                ASSERT_TRUE(model->forward(s, n * kM + i));
            }
        }
        for (int i = 0; i < kM; ++i) {
            for (int s = kP - 1; s >= 0; --s) {
                ASSERT_TRUE(model->backward(s, n * kM + i));
            }
        }
        for (int s = 0; s < kP; ++s) {
            ASSERT_TRUE(model->update(s, kM));
        }
        double sum = 0.0;
        for (int i = 0; i < kM; ++i) {
            sum += model->loss(static_cast<std::int64_t>(n) * kM + i).value_or(NAN);
        }
        auto expected = ref->trainBatch(static_cast<std::int64_t>(n) * kM, kM);
        ASSERT_TRUE(expected);
        EXPECT_NEAR(sum / kM, *expected, 1e-5 * *expected) << "batch " << n;
    }
}

TEST(LayerUnits, ABadUnitPartitionNamesTheField)
{
    ModelOptions o = test::tinyModelOptions(kP, kM, WeightPolicy::Flush);
    o.unitsPerStage = {1, 2, 3, 2}; // 8 != 7 units
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    ASSERT_FALSE(model);
    EXPECT_EQ(model.error().context, "pipeline.partition");
}

TEST(UnitProfiler, MeasuresEveryUnitOnTheCpu)
{
    UnitProfileOptions o;
    o.shape = test::tinyTestShape();
    o.microBatchSize = 2;
    o.repeats = 3;
    auto units = profileLayerUnits(o);
    ASSERT_TRUE(units) << units.error().describe();
    const GptShape& s = o.shape;
    ASSERT_EQ(units->size(), static_cast<std::size_t>(layerUnitCount(s)));
    for (const UnitCost& u : *units) {
        EXPECT_GT(u.forwardMs, 0.0);
        EXPECT_GT(u.backwardMs, 0.0);
    }
    // Static bytes are exact: fp32 weights, gradients and two AdamW moments.
    EXPECT_EQ((*units)[0].staticBytes, 16 * s.embeddingParams());
    EXPECT_EQ((*units)[1].staticBytes, 16 * s.blockParams());
    EXPECT_EQ((*units)[5].staticBytes, 16 * 2 * s.dModel);
    EXPECT_EQ((*units)[6].paramBytes, 4 * (s.headParams() - 2 * s.dModel));
    // Activations come from real allocations: identical blocks keep identical bytes, at least
    // their output (b·T·d floats); the head keeps at least its logits (b·T·V floats).
    const std::int64_t tokens = 2 * s.seqLen;
    EXPECT_EQ((*units)[1].activationBytes, (*units)[4].activationBytes);
    EXPECT_GE((*units)[1].activationBytes, 4 * tokens * s.dModel);
    EXPECT_GE((*units)[6].activationBytes, 4 * tokens * s.vocab);
    EXPECT_GT((*units)[1].activationBytes, (*units)[5].activationBytes);
}

// The memory estimate pre-flight and the simulator use (GptShape::blockActivationBytes) against
// what a block really keeps on the CPU, in fp32 and under bf16 autocast, with the attention this
// LibTorch runs (2.x: scaled_dot_product_attention; 1.13: (T, T) scores kept). Dropout 0: on the
// CPU dropout keeps a mask of the activations' type (on CUDA a byte), which the estimate does not
// model. The shape keeps the scores small beside the block (d 256, T 32), as gpt2-medium's are
// with fused attention. Before issue 31 the estimate ignored the precision: 0.30x the bf16 block.
TEST(UnitProfiler, BlockActivationEstimateAgreesWithTheMeasuredBlock)
{
    const GptShape shape{.layers = 2, .dModel = 256, .heads = 4, .seqLen = 32, .vocab = 256};
    std::int64_t measured[2] = {0, 0};
    for (const bool bf16 : {false, true}) {
        UnitProfileOptions o;
        o.shape = shape;
        o.microBatchSize = 2;
        o.bf16 = bf16;
        o.repeats = 1;
        auto units = profileLayerUnits(o);
        ASSERT_TRUE(units) << units.error().describe();
        GptShape estimated = shape;
        estimated.activationBytes = bf16 ? 2 : 4;
        estimated.fusedAttention = torchVersion().rfind("1.", 0) != 0; // 2.x: the fused attention
        const std::int64_t block = (*units)[1].activationBytes;
        measured[bf16 ? 1 : 0] = block;
        const double ratio = static_cast<double>(estimated.blockActivationBytes(2)) / static_cast<double>(block);
        // Pre-flight refuses runs on it: it may over-count (the published fp32 count is ~1.4x what
        // LibTorch 1.13 keeps on the CPU), never under-count by more than a little.
        EXPECT_GT(ratio, 0.9) << (bf16 ? "bf16" : "fp32") << ": measured " << block;
        EXPECT_LT(ratio, 1.5) << (bf16 ? "bf16" : "fp32") << ": measured " << block;
    }
    // At this small width the bf16 weight copies autograd keeps outweigh the halved activations;
    // at gpt2-medium's (h 1024, s·b 4096) they are 6 % of a block's bytes.
    EXPECT_GT(measured[1], 0);
}

TEST(UnitProfiler, RefusesADeviceThatIsNotThere)
{
    UnitProfileOptions o;
    o.shape = test::tinyTestShape();
    o.device = 64;
    auto units = profileLayerUnits(o);
    ASSERT_FALSE(units);
    EXPECT_EQ(units.error().context, "device.name");
}

} // namespace
} // namespace bs::runtime
