// optimizer.lr_scaling: the PACI authors' rule (TrainGPT.py) on lr and step counts, exact figures.
#include "runtime/plan/config/lr_scaling.h"

#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/config/config_validate.h"

#include <gtest/gtest.h>

#include <cmath>

namespace bs::runtime {
namespace {

RunConfig at(int m, int b, int base, const std::string& rule)
{
    RunConfig c;
    c.pipeline.microbatches = m;
    c.pipeline.microBatchSize = b;
    c.optimizer.lr = 3e-4;
    c.optimizer.minLr = 3e-5;
    c.optimizer.warmupSteps = 10;
    c.optimizer.totalSteps = 100;
    c.optimizer.baseGlobalBatch = base;
    c.optimizer.lrScaling = rule;
    return c;
}

TEST(LrScaling, SqrtRuleOnLrAndInverseOnSteps)
{
    const ScaledOptimizer s = scaledOptimizer(at(8, 4, 8, "sqrt")); // G = 32 = 4 · G0
    EXPECT_DOUBLE_EQ(s.lr, 6e-4); // √4 = 2
    EXPECT_DOUBLE_EQ(s.minLr, 6e-5); // the floor keeps its ratio
    EXPECT_DOUBLE_EQ(s.stepScale, 0.25);
    EXPECT_EQ(s.warmupSteps, 3); // 10 · 8/32 = 2.5, rounded half away from zero
    EXPECT_EQ(s.totalSteps, 25);
}

TEST(LrScaling, LinearNoneAndTheRunsOwnBatch)
{
    const ScaledOptimizer linear = scaledOptimizer(at(8, 4, 8, "linear"));
    EXPECT_DOUBLE_EQ(linear.lr, 12e-4);
    EXPECT_EQ(linear.totalSteps, 25);
    const ScaledOptimizer none = scaledOptimizer(at(8, 4, 8, "none"));
    EXPECT_DOUBLE_EQ(none.lr, 3e-4);
    EXPECT_EQ(none.warmupSteps, 10);
    EXPECT_EQ(none.totalSteps, 100);
    for (int base : {0, 32}) { // 0 = the run's own m·b: nothing changes
        const ScaledOptimizer own = scaledOptimizer(at(8, 4, base, "sqrt"));
        EXPECT_DOUBLE_EQ(own.lr, 3e-4);
        EXPECT_EQ(own.warmupSteps, 10);
        EXPECT_EQ(own.totalSteps, 100);
    }
    RunConfig decayToRunEnd = at(2, 2, 16, "sqrt"); // G = 4 = G0/4: half the lr
    decayToRunEnd.optimizer.totalSteps = 0; // the run's own length: not rescaled
    const ScaledOptimizer smaller = scaledOptimizer(decayToRunEnd);
    EXPECT_DOUBLE_EQ(smaller.lr, 1.5e-4);
    EXPECT_EQ(smaller.warmupSteps, 40);
    EXPECT_EQ(smaller.totalSteps, 0);
    EXPECT_DOUBLE_EQ(lrScale("sqrt", 50, 0), 1.0);
}

TEST(LrScaling, ConfigKeysRoundTripAndAreChecked)
{
    RunConfig c = at(8, 4, 16, "linear");
    auto back = parseRunConfig(toToml(c));
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    EXPECT_EQ(back->optimizer.lrScaling, "linear");
    EXPECT_EQ(back->optimizer.baseGlobalBatch, 16);
    EXPECT_EQ(*back, c);
    c.optimizer.lrScaling = "cubic";
    const Status bad = validate(c);
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().context, "optimizer.lr_scaling");
    c.optimizer.lrScaling = "sqrt";
    c.optimizer.baseGlobalBatch = -1;
    ASSERT_FALSE(validate(c).has_value());
    EXPECT_EQ(validate(c).error().context, "optimizer.base_global_batch");
}

} // namespace
} // namespace bs::runtime
