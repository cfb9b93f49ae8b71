// optimizer.lr_scaling in a real run: a config whose base global batch is a quarter of its own
// trains exactly as the config with the rescaled lr and steps written out (sqrt rule), and a live
// Apply that changes the global batch rescales from the run's first m·b.
#include "runtime/train/exec/run_session.h"
#include "tests/support/tiny_run_config.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

std::vector<double> losses(const RunConfig& c, int before = 0, const RunConfig* apply = nullptr)
{
    auto session = RunSession::create(c, {});
    EXPECT_TRUE(session.has_value()) << session.error().describe();
    if (!session) {
        return {};
    }
    if (apply) {
        EXPECT_TRUE(session->runSteps(before).has_value());
        EXPECT_TRUE(session->requestApply(*apply).has_value());
    }
    EXPECT_TRUE(session->run().has_value());
    return session->summary().losses;
}

TEST(LrScalingRun, SqrtRuleEqualsTheRescaledSettingsWrittenOut)
{
    RunConfig scaled = bs::test::tinyRunConfig("1f1b", 4); // m = 4, b = 2: G = 8
    scaled.optimizer.lr = 1e-2;
    scaled.optimizer.minLr = 1e-3;
    scaled.optimizer.warmupSteps = 4;
    scaled.optimizer.totalSteps = 8;
    scaled.optimizer.baseGlobalBatch = 2; // G = 4 · G0: lr × 2, steps × 1/4
    scaled.optimizer.lrScaling = "sqrt";
    RunConfig written = scaled;
    written.optimizer.lr = 2e-2;
    written.optimizer.minLr = 2e-3;
    written.optimizer.warmupSteps = 1;
    written.optimizer.totalSteps = 2;
    written.optimizer.lrScaling = "none";
    const std::vector<double> a = losses(scaled);
    ASSERT_EQ(a.size(), 4u);
    EXPECT_EQ(a, losses(written));
    RunConfig unscaled = scaled;
    unscaled.optimizer.lrScaling = "none";
    EXPECT_NE(a, losses(unscaled)) << "the rule changes the training";
}

TEST(LrScalingRun, LiveApplyOfALargerBatchRescales)
{
    RunConfig c = bs::test::tinyRunConfig("1f1b", 4);
    c.optimizer.warmupSteps = 0;
    c.optimizer.decay = "constant";
    RunConfig bigger = c;
    bigger.pipeline.microBatchSize = 8; // G 8 -> 32: sqrt doubles lr
    c.optimizer.lrScaling = "sqrt";
    const std::vector<double> sqrt = losses(c, 2, &bigger);
    c.optimizer.lrScaling = "none";
    const std::vector<double> none = losses(c, 2, &bigger);
    ASSERT_EQ(sqrt.size(), 4u);
    ASSERT_EQ(none.size(), 4u);
    EXPECT_EQ(sqrt[0], none[0]);
    EXPECT_EQ(sqrt[2], none[2]) << "batch 2's loss is measured before its update";
    EXPECT_NE(sqrt[3], none[3]) << "the update after the Apply used a doubled lr";
    // The same as a fresh run of the Apply's settings whose lr is given for the first batch size.
    RunConfig fresh = bs::test::tinyRunConfig("1f1b", 4);
    fresh.optimizer.warmupSteps = 0;
    fresh.optimizer.decay = "constant";
    fresh.pipeline.microBatchSize = 8;
    fresh.optimizer.baseGlobalBatch = 8;
    fresh.optimizer.lrScaling = "sqrt";
    RunConfig doubled = fresh;
    doubled.optimizer.lr *= 2;
    doubled.optimizer.minLr *= 2;
    doubled.optimizer.lrScaling = "none";
    EXPECT_EQ(losses(fresh), losses(doubled));
}

} // namespace
} // namespace bs::runtime
