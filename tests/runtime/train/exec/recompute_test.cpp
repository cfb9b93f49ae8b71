// Activation recompute (model.recompute): synchronous schedules train exactly as with stored
// activations; the measured peak activation memory per stage drops as the cost model predicts
// (recompute_costs.h); PACI's recomputed forwards that see newer weights are counted per stage.
#include "runtime/plan/sim/cost_model.h"
#include "runtime/plan/sim/recompute_costs.h"
#include "runtime/plan/sim/simulator.h"
#include "runtime/plan/sim/tuner.h"
#include "runtime/train/exec/run_session.h"
#include "tests/support/tiny_run_config.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace bs::runtime {
namespace {

RunConfig config(const std::string& schedule, bool recompute, int steps = 3)
{
    RunConfig c = bs::test::tinyRunConfig(schedule, steps);
    c.model.recompute = recompute;
    if (schedule == "paci") {
        c.pipeline.accum = 2;
    }
    return c;
}

RunSummary train(const RunConfig& c)
{
    auto session = RunSession::create(c, {});
    EXPECT_TRUE(session.has_value()) << session.error().describe();
    if (!session) {
        return {};
    }
    const Status s = session->run();
    EXPECT_TRUE(s.has_value()) << s.error().describe();
    return session->summary();
}

class RecomputeSync : public ::testing::TestWithParam<std::string>
{};

TEST_P(RecomputeSync, LossesEqualTheStoredActivationRun)
{
    const RunSummary stored = train(config(GetParam(), false));
    const RunSummary recomputed = train(config(GetParam(), true));
    ASSERT_EQ(stored.losses.size(), 3u);
    EXPECT_EQ(recomputed.losses, stored.losses) << "the recomputed forward uses the same weights: same numbers";
    for (const StageMetrics& s : recomputed.stages) {
        EXPECT_GT(s.recomputes, 0) << "stage " << s.stage;
        EXPECT_EQ(s.recomputesOnNewerWeights, 0) << "a flush schedule updates only after every backward";
    }
}

INSTANTIATE_TEST_SUITE_P(Schedules, RecomputeSync, ::testing::Values("1f1b", "gpipe", "zb-h1"),
    [](const ::testing::TestParamInfo<std::string>& param) {
        std::string n = param.param;
        std::replace(n.begin(), n.end(), '-', '_');
        return n;
    });

TEST(Recompute, PeakActivationPerStageDropsAsPredicted)
{
    // GPipe holds all m = 4 micro-batches' activations on every stage at its peak: the cleanest case.
    const RunConfig stored = config("gpipe", false, 2);
    const RunSummary a = train(stored);
    const RunSummary b = train(config("gpipe", true, 2));
    ASSERT_EQ(a.stages.size(), 4u);
    ASSERT_EQ(b.stages.size(), 4u);
    auto costs = costModelFromGpt(stored.model.shape, 4, stored.pipeline.microBatchSize, *deviceProfile("cpu"));
    ASSERT_TRUE(costs.has_value());
    const CostModel with = withRecompute(*costs, stored.model.shape, stored.pipeline.microBatchSize);
    const int m = stored.pipeline.microbatches;
    for (int s = 0; s < 4; ++s) {
        const auto i = static_cast<std::size_t>(s);
        const double measuredStored = static_cast<double>(a.stages[i].peakActivationBytes);
        const double measuredRecompute = static_cast<double>(b.stages[i].peakActivationBytes);
        const double predictedStored = static_cast<double>(m * costs->stages[i].activationBytes);
        const double predictedRecompute =
            static_cast<double>(m * with.stages[i].activationBytes + with.stages[i].recomputeBytes);
        const double measuredDrop = measuredRecompute / measuredStored;
        const double predictedDrop = predictedRecompute / predictedStored;
        std::printf("stage %d: peak activations %.0f -> %.0f bytes (x%.3f measured, x%.3f predicted)\n", s,
            measuredStored, measuredRecompute, measuredDrop, predictedDrop);
        EXPECT_LT(measuredRecompute, 0.6 * measuredStored) << "stage " << s;
        EXPECT_NEAR(measuredDrop, predictedDrop, 0.15) << "stage " << s;
    }
}

TEST(Recompute, PaciRecomputesOnNewerWeightsAndCountsThem)
{
    const RunSummary paci = train(config("paci", true, 3));
    ASSERT_EQ(paci.stages.size(), 4u);
    // Stage 0 has p − 1 = 3 micro-batches in flight and updates every a = 2 backwards: some of its
    // recomputes run after an update their forward did not see; the last stage's never do.
    EXPECT_GT(paci.stages[0].recomputesOnNewerWeights, 0);
    EXPECT_GE(paci.stages[0].maxRecomputeLag, 1);
    EXPECT_EQ(paci.stages[3].recomputesOnNewerWeights, 0);
    EXPECT_EQ(paci.stages[0].maxRecomputeLag, paci.stages[0].maxLag) << "the recompute runs at the backward";

    const RunSummary stash = train(config("pipedream", true, 3));
    for (const StageMetrics& s : stash.stages) {
        EXPECT_EQ(s.recomputesOnNewerWeights, 0) << "pipedream recomputes on the stashed forward version";
    }
    // Against stored activations PIpeDream's numbers stay the same (its backward sees the forward's weights).
    EXPECT_EQ(stash.losses, train(config("pipedream", false, 3)).losses);
}

TEST(Recompute, SimulatorPaysAForwardPerBackwardAndHoldsInputsOnly)
{
    GptScenario s;
    s.schedule = "1f1b";
    s.stages = 8;
    s.shape = *gptPreset("gpt2-medium");
    s.device = *deviceProfile("h100");
    s.accum = 8;
    s.microBatchSize = 8;
    s.batches = 2;
    auto stored = makeGptRequest(s);
    s.recompute = true;
    auto recomputed = makeGptRequest(s);
    ASSERT_TRUE(stored.has_value() && recomputed.has_value());
    for (std::size_t i = 0; i < 8; ++i) {
        const StageCost& a = stored->costs.stages[i];
        const StageCost& b = recomputed->costs.stages[i];
        EXPECT_EQ(b.backwardInput, a.backwardInput + a.forward) << "stage " << i;
        EXPECT_EQ(b.recomputeBytes, a.activationBytes);
        EXPECT_EQ(b.activationBytes, recomputeInputBytes(s.shape, 8, static_cast<int>(i), 8));
    }
    EXPECT_EQ(recomputeInputBytes(s.shape, 8, 3, 8), 8LL * 1024 * 1024 * 4); // b·T·C fp32
    auto a = simulate(*stored);
    auto b = simulate(*recomputed);
    ASSERT_TRUE(a.has_value() && b.has_value());
    EXPECT_GT(b->report.makespan, a->report.makespan);
    // Stage 0 holds p = 8 micro-batches at 1F1B's peak: 8 inputs and one full set instead of 8 full sets.
    const auto& a0 = a->report.perStage[0];
    const auto& b0 = b->report.perStage[0];
    // Weights, gradients, moments, and one backward's working set (held only while it runs).
    const std::int64_t staticBytes = 4 * stored->costs.stages[0].paramBytes + stored->costs.stages[0].workingBytes;
    EXPECT_EQ(recomputed->costs.stages[0].workingBytes, stored->costs.stages[0].workingBytes);
    EXPECT_EQ(a0.peakMemoryBytes - staticBytes, 8 * stored->costs.stages[0].activationBytes);
    EXPECT_EQ(b0.peakMemoryBytes - staticBytes,
        8 * recomputed->costs.stages[0].activationBytes + recomputed->costs.stages[0].recomputeBytes);
}

} // namespace
} // namespace bs::runtime
