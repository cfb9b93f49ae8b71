#include "runtime/plan/sim/cost_model.h"

#include "runtime/plan/sim/simulator.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

TEST(CostModel, ParsesMillisecondsAndDefaultsUpdateToZero)
{
    auto model = costModelFromString("1.5,1,0.5", 4, 0.25);
    ASSERT_TRUE(model) << model.error().describe();
    ASSERT_EQ(model->stages.size(), 4u);
    EXPECT_EQ(model->stages[0].forward, 1'500'000);
    EXPECT_EQ(model->stages[0].duration(ActionKind::Backward), 1'500'000);
    EXPECT_EQ(model->stages[0].update, 0);
    EXPECT_EQ(model->commLatency, 250'000);
}

TEST(CostModel, BadCostStringsNameTheFormat)
{
    for (const auto& [text, fragment] : std::vector<std::pair<std::string, std::string>>{
             {"1,1", "expected 3 or 4 values"}, {"1,-1,1", "negative time"}, {"1,x,1", "not a number"},
             {"1,1,1,1,1", "expected 3 or 4 values"}, {"0,0,0", "all zero"}, {"nan,1,1", "not a number"}}) {
        auto model = costModelFromString(text, 2, 0);
        ASSERT_FALSE(model) << text;
        EXPECT_NE(model.error().message.find(fragment), std::string::npos) << text << ": " << model.error().message;
        EXPECT_NE(model.error().context.find("F,I,W[,U]"), std::string::npos);
    }
    EXPECT_FALSE(costModelFromString("1,1,1", 2, -1));
}

TEST(CostModel, Gpt2MediumHasThePapersParameterCount)
{
    auto shape = gptPreset("gpt2-medium");
    ASSERT_TRUE(shape);
    // 24 blocks of 12d²+13d, token+position embeddings, untied head and final LayerNorm: ≈406.3 M.
    EXPECT_NEAR(static_cast<double>(shape->totalParams()) / 1e6, 406.3, 0.1);
}

TEST(CostModel, DerivedFromGptPutsTheHeadOnTheLastStage)
{
    auto shape = gptPreset("gpt2-medium");
    auto device = deviceProfile("h100");
    ASSERT_TRUE(shape && device);
    auto model = costModelFromGpt(*shape, 8, 4, *device);
    ASSERT_TRUE(model) << model.error().describe();
    ASSERT_EQ(model->stages.size(), 8u);
    EXPECT_TRUE(model->bytesKnown);
    std::int64_t params = 0;
    for (const auto& s : model->stages) {
        EXPECT_GT(s.forward, 0);
        params += s.paramBytes / 4;
    }
    EXPECT_EQ(params, shape->totalParams());
    // Balanced: no stage's forward is more than twice another's (the head is worth about 4 blocks).
    TimeNs lo = model->stages[0].forward, hi = lo;
    for (const auto& s : model->stages) {
        lo = std::min(lo, s.forward);
        hi = std::max(hi, s.forward);
    }
    EXPECT_LT(hi, 2 * lo);
    auto sim = simulate({{.name = "paci", .stages = 8, .microbatches = 8, .batches = 4}, *model, 4});
    ASSERT_TRUE(sim);
    EXPECT_GT(sim->report.perStage[0].peakMemoryBytes, 4 * model->stages[0].paramBytes);
}

TEST(CostModel, UnknownNamesListTheAllowedValues)
{
    auto device = deviceProfile("tpu");
    ASSERT_FALSE(device);
    EXPECT_NE(device.error().context.find("cpu, a100, h100, h200"), std::string::npos);
    auto shape = gptPreset("huge");
    ASSERT_FALSE(shape);
    EXPECT_NE(shape.error().context.find("tiny, small, deep, gpt2-medium"), std::string::npos);
}

TEST(Partition, ExplicitCountsOverrideAndAreChecked)
{
    GptShape shape;
    auto part = partitionLayers(shape, 4, 1, {1, 3, 2, 2});
    ASSERT_TRUE(part);
    EXPECT_EQ(part->firstLayer, (std::vector<int>{0, 1, 4, 6}));
    EXPECT_FALSE(partitionLayers(shape, 4, 1, {1, 1, 1}));
    EXPECT_FALSE(partitionLayers(shape, 4, 1, {1, 1, 1, 1}));
    auto balanced = partitionLayers(shape, 8, 1);
    ASSERT_TRUE(balanced);
    int total = 0;
    for (int c : balanced->layerCount) {
        total += c;
    }
    EXPECT_EQ(total, shape.layers);
}

} // namespace
} // namespace bs::runtime
