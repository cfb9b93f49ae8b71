// The time-to-target model from the user's runs (goodput_runs.h): which samples and lags the fit
// reads from a run's validation curve, and what it does when short calibration runs stop above
// the target loss.
#include "runtime/plan/sim/goodput_runs.h"

#include "runtime/plan/config/config_presets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {
namespace {

constexpr double kNoise = 10.0; // B_noise the runs measure
constexpr double kLagCost = 0.2; // c the runs' samples follow

/// Samples per unit of validation loss of PACI at p = 8 with window a (b = 4: B = 4a, lag
/// ⌈7/a⌉) under the model: E(L) = 1000 (5 − L) (1 + B/B_noise)(1 + c)^lag samples to loss L.
double samplesPerLoss(int a)
{
    return 1000.0 * (1 + 4.0 * a / kNoise) * std::pow(1 + kLagCost, (7 + a - 1) / a);
}

/// That run's metrics for `steps` batches: its validation loss follows the model.
StatisticsRun paciRun(int a, int steps)
{
    RunConfig config = demoConfig();
    config.schedule.name = "paci";
    config.pipeline.stages = 8;
    config.pipeline.microbatches = a;
    config.pipeline.accum = a;
    config.pipeline.microBatchSize = 4;
    const double batchPerUpdate = 4.0 * a;
    auto metrics = std::make_shared<std::vector<BatchMetrics>>();
    for (int step = 0; step < steps; ++step) {
        BatchMetrics m;
        m.step = step;
        m.valLoss = 5.0 - (step + 1) * batchPerUpdate / samplesPerLoss(a);
        m.noise = combineStages({StageNoiseScale{0, 1.0, kNoise, kNoise, 4.0, batchPerUpdate, step + 1}});
        metrics->push_back(m);
    }
    return {"run paci-a" + std::to_string(a), config, metrics};
}

/// The steps after which the run's validation loss is at or below `loss`.
int stepsTo(int a, double loss)
{
    return static_cast<int>(std::ceil((5.0 - loss) * samplesPerLoss(a) / (4.0 * a)));
}

TEST(GoodputRuns, TwoLagsAtTheTargetFitTheLagCostThere)
{
    auto model = goodputFromRuns({paciRun(8, stepsTo(8, 2.9)), paciRun(2, stepsTo(2, 2.9))}, 3.0);
    ASSERT_TRUE(model) << model.error().describe();
    EXPECT_TRUE(model->lagCostFitted());
    EXPECT_NEAR(model->lagCost(), kLagCost, 0.02);
    EXPECT_FALSE(model->lagCostAtLoss());
    ASSERT_TRUE(model->hasSamplesMin());
    EXPECT_NEAR(model->samplesToTarget(0, 0), 2000.0, 40.0); // E_min = 1000 × (5 − 3)
}

TEST(GoodputRuns, ShortRunsAboveTheTargetFitTheLagCostAtTheLowestLossBothReached)
{
    // Neither reaches 3.0: before, the lag cost stayed 0 and the most stale window ranked first.
    auto model = goodputFromRuns({paciRun(8, stepsTo(8, 3.4)), paciRun(2, stepsTo(2, 3.3))}, 3.0);
    ASSERT_TRUE(model) << model.error().describe();
    EXPECT_TRUE(model->lagCostFitted());
    EXPECT_NEAR(model->lagCost(), kLagCost, 0.03);
    ASSERT_TRUE(model->lagCostAtLoss());
    EXPECT_NEAR(*model->lagCostAtLoss(), 3.4, 0.01); // a = 8's lowest: the highest of the two
    EXPECT_FALSE(model->hasSamplesMin()); // times relative: no run reached the target
    EXPECT_NE(model->describe().find("at validation loss 3."), std::string::npos) << model->describe();
    EXPECT_NE(model->describe().find("times are relative"), std::string::npos) << model->describe();
    // A window of one micro-batch (lag 7) is predicted slower than a = 2, as the runs say.
    EXPECT_GT(model->samplesToTarget(4, 7), model->samplesToTarget(8, 4));
}

TEST(GoodputRuns, OneRunAtTheTargetGivesEMinTheOtherTheLagCost)
{
    auto model = goodputFromRuns({paciRun(8, stepsTo(8, 2.95)), paciRun(2, stepsTo(2, 3.3))}, 3.0);
    ASSERT_TRUE(model) << model.error().describe();
    ASSERT_TRUE(model->lagCostAtLoss());
    EXPECT_NEAR(*model->lagCostAtLoss(), 3.3, 0.01);
    ASSERT_TRUE(model->hasSamplesMin());
    // E_min from a = 8's samples to 3.0 with the lag cost fitted at 3.3: its own samples again.
    EXPECT_NEAR(model->samplesToTarget(32, 1) / (stepsTo(8, 3.0) * 32.0), 1.0, 0.03);
    EXPECT_NE(model->describe().find("E_min"), std::string::npos);
    EXPECT_NE(model->describe().find("from run paci-a8"), std::string::npos) << model->describe();
}

TEST(GoodputRuns, RunsOfOneLagLeaveTheLagCostUnfitted)
{
    auto model = goodputFromRuns({paciRun(8, stepsTo(8, 3.4)), paciRun(8, stepsTo(8, 3.2))}, 3.0);
    ASSERT_TRUE(model) << model.error().describe();
    EXPECT_FALSE(model->lagCostFitted());
    EXPECT_FALSE(model->lagCostAtLoss());
    EXPECT_NE(model->describe().find("not fitted"), std::string::npos);
}

} // namespace
} // namespace bs::runtime
