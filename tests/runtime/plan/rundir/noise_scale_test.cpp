// The gradient noise scale's arithmetic (noise_scale.h) and its records: the two-batch-size
// estimates recover |G|² and tr(Σ) from exact expected norms, each is averaged before dividing,
// the model's figures are sums over stages, and metrics.jsonl's "noise" / summary.json's
// "noise_scale" come back as written (bad values: one ParseError naming the field).
#include "runtime/plan/common/noise_scale.h"

#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/rundir/run_dir_writer.h"
#include "runtime/plan/rundir/run_loader.h"

#include <gtest/gtest.h>

#include <cmath>

#include "temp_dir.h"

namespace bs::runtime {
namespace {

using testing::TempDir;

/// E|G_B|² for a batch of B samples: |G|² + tr(Σ)/B.
double expectedSqNorm(double gradSq, double trace, double b)
{
    return gradSq + trace / b;
}

TEST(NoiseScale, ExpectedNormsGiveTheTrueFiguresBack)
{
    NoiseScaleAverager avg(2);
    // |G|² = 2, tr(Σ) = 800: B_simple = 400 samples; micro-batch b = 8, window a·b = 64.
    ASSERT_TRUE(avg.add(expectedSqNorm(2.0, 800.0, 8.0), 8.0, expectedSqNorm(2.0, 800.0, 64.0), 64.0));
    StageNoiseScale s = avg.estimate();
    EXPECT_EQ(s.stage, 2);
    EXPECT_NEAR(s.gradSqNorm, 2.0, 1e-9);
    EXPECT_NEAR(s.traceSigma, 800.0, 1e-9);
    EXPECT_NEAR(s.bSimple, 400.0, 1e-6);
    EXPECT_EQ(s.bSmall, 8.0);
    EXPECT_EQ(s.bBig, 64.0);
    EXPECT_EQ(s.updates, 1);
}

TEST(NoiseScale, AveragesEachEstimateThenDivides)
{
    // Two updates whose single ratios are 100 and 1000: the mean ratio would be 550; averaging
    // |G|² (1 and 0.1 -> 0.55) and tr(Σ) (100 each) first gives 100/0.55.
    NoiseScaleAverager avg(0, 0.5);
    ASSERT_TRUE(avg.add(expectedSqNorm(1.0, 100.0, 4.0), 4.0, expectedSqNorm(1.0, 100.0, 16.0), 16.0));
    ASSERT_TRUE(avg.add(expectedSqNorm(0.1, 100.0, 4.0), 4.0, expectedSqNorm(0.1, 100.0, 16.0), 16.0));
    const StageNoiseScale s = avg.estimate();
    // Bias-corrected with decay 0.5: weights 1/3 and 2/3 (the newer counts twice).
    const double gradSq = (1.0 * 0.5 * 0.5 + 0.1 * 0.5) / 0.75;
    EXPECT_NEAR(s.gradSqNorm, gradSq, 1e-9);
    EXPECT_NEAR(s.traceSigma, 100.0, 1e-9);
    EXPECT_NEAR(s.bSimple, 100.0 / gradSq, 1e-6);
    EXPECT_EQ(s.updates, 2);
}

TEST(NoiseScale, RefusesInputThatCannotBeAnEstimate)
{
    NoiseScaleAverager avg;
    EXPECT_FALSE(avg.add(1.0, 8.0, 0.5, 8.0)); // B_big must exceed B_small (a = 1 has no estimate)
    EXPECT_FALSE(avg.add(1.0, 0.0, 0.5, 8.0));
    EXPECT_FALSE(avg.add(std::nan(""), 1.0, 0.5, 8.0));
    EXPECT_FALSE(avg.add(1.0, 1.0, -0.5, 8.0));
    EXPECT_EQ(avg.updates(), 0);
    const StageNoiseScale s = avg.estimate();
    EXPECT_EQ(s.gradSqNorm, 0.0);
    EXPECT_TRUE(std::isnan(s.bSimple)); // nothing measured: no noise scale, not 0
}

TEST(NoiseScale, NegativeGradientEstimateHasNoNoiseScale)
{
    NoiseScaleAverager avg;
    // The big batch's norm above what its size explains: |G|² estimate < 0 (happens early, noisy).
    ASSERT_TRUE(avg.add(1.0, 1.0, 0.4, 2.0));
    EXPECT_LT(avg.estimate().gradSqNorm, 0.0);
    EXPECT_TRUE(std::isnan(avg.estimate().bSimple));
}

TEST(NoiseScale, TheModelIsTheSumOfItsStages)
{
    StageNoiseScale a{0, 1.0, 300.0, 300.0, 8.0, 64.0, 5};
    StageNoiseScale b{1, 3.0, 100.0, 100.0 / 3.0, 8.0, 32.0, 4};
    const NoiseScaleEstimate e = combineStages({a, b});
    EXPECT_EQ(e.gradSqNorm, 4.0);
    EXPECT_EQ(e.traceSigma, 400.0);
    EXPECT_EQ(e.bSimple, 100.0);
    EXPECT_EQ(e.bSmall, 8.0);
    EXPECT_EQ(e.bBig, 32.0);
    EXPECT_EQ(e.updates, 4);
    ASSERT_EQ(e.stages.size(), 2u);
    EXPECT_TRUE(e.stages[1] == b);
}

NoiseScaleEstimate estimate(double scale)
{
    return combineStages({StageNoiseScale{0, 0.5 * scale, 40.0, 80.0 / scale, 4.0, 16.0, 3},
        StageNoiseScale{1, 0.25, 20.0, 80.0, 4.0, 16.0, 3}});
}

TEST(NoiseScale, RecordsComeBackAsWritten)
{
    TempDir tmp;
    std::vector<BatchMetrics> batches(3);
    for (int i = 0; i < 3; ++i) {
        batches[static_cast<std::size_t>(i)].step = i;
        batches[static_cast<std::size_t>(i)].trainLoss = 4.0;
    }
    batches[1].noise = estimate(1.0); // none for step 0: no update finished yet
    batches[2].noise = estimate(2.0);
    batches[2].noise->stages[1].gradSqNorm = -0.25; // early |G|² estimates may be negative
    batches[2].noise->stages[1].bSimple = std::nan("");
    RunSummary summary;
    summary.noiseScale = estimate(2.0);
    {
        auto writer = RunDirWriter::create(tmp.path());
        ASSERT_TRUE(writer);
        ASSERT_TRUE(writer->writeConfig(demoConfig()));
        for (const auto& b : batches) {
            ASSERT_TRUE(writer->appendMetrics(nlohmann::json(b)));
        }
        ASSERT_TRUE(writer->writeSummary(nlohmann::json(summary)));
    }
    auto run = loadRun(tmp.path());
    ASSERT_TRUE(run) << run.error().describe();
    ASSERT_EQ(run->metrics.size(), 3u);
    EXPECT_FALSE(run->metrics[0].noise);
    EXPECT_TRUE(run->metrics[1] == batches[1]);
    ASSERT_TRUE(run->metrics[2].noise);
    EXPECT_EQ(run->metrics[2].noise->stages[1].gradSqNorm, -0.25);
    EXPECT_TRUE(std::isnan(run->metrics[2].noise->stages[1].bSimple)); // written as null
    EXPECT_EQ(run->metrics[2].noise->bSimple, batches[2].noise->bSimple);
    ASSERT_TRUE(run->summary && run->summary->noiseScale);
    EXPECT_TRUE(*run->summary->noiseScale == *summary.noiseScale);
}

TEST(NoiseScale, BadRecordsNameTheField)
{
    const std::vector<std::pair<std::string, std::string>> cases{
        {R"({"noise": 3})", "noise"},
        {R"({"noise": {"b_simple": -1}})", "noise.b_simple"},
        {R"({"noise": {"updates": 1.5}})", "noise.updates"},
        {R"({"noise": {"grad_sq_norm": "big"}})", "noise.grad_sq_norm"},
        {R"({"noise": {"per_stage": {"stage": 0}}})", "noise.per_stage"},
        {R"({"noise": {"per_stage": [{"stage": 0}, {"trace_sigma": true}]}})", "noise.per_stage[1].trace_sigma"},
        {R"({"noise": {"per_stage": [7]}})", "noise.per_stage[0]"},
    };
    for (const auto& [line, field] : cases) {
        Result<MetricsLog> log = parseMetricsJsonl(line + "\n", "m.jsonl");
        ASSERT_FALSE(log) << line;
        EXPECT_EQ(log.error().code, ErrorCode::ParseError) << line;
        EXPECT_EQ(log.error().context, "m.jsonl:1: " + field) << log.error().describe();
    }
    TempDir tmp;
    {
        auto writer = RunDirWriter::create(tmp.path());
        ASSERT_TRUE(writer);
        ASSERT_TRUE(writer->writeConfig(demoConfig()));
        ASSERT_TRUE(writer->writeSummary({{"noise_scale", {{"b_big", "many"}}}}));
    }
    auto run = loadRun(tmp.path());
    ASSERT_FALSE(run);
    EXPECT_NE(run.error().context.find("noise_scale.b_big"), std::string::npos) << run.error().describe();
    // What the writer writes for a run without an estimate yet passes.
    Result<MetricsLog> good = parseMetricsJsonl(
        R"({"step":0,"noise":{"grad_sq_norm":-0.5,"trace_sigma":3,"b_simple":null,"updates":1,"per_stage":[]}})"
        "\n");
    EXPECT_TRUE(good) << good.error().describe();
}

} // namespace
} // namespace bs::runtime
