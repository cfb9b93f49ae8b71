// A training run records its gradient noise scale: metrics.jsonl's "noise" per global batch once
// every stage has an estimate, summary.json's "noise_scale" at the end, per stage and for the
// model, with the batch sizes the schedule gives (PACI: b and a·b; flush: b and m·b; a = 1:
// b and 2b, consecutive updates paired).
#include "runtime/plan/rundir/run_loader.h"
#include "runtime/train/dist/rank_merge.h"
#include "runtime/train/exec/run_session.h"
#include "tests/support/tiny_run_config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace bs::runtime {
namespace {

struct Case
{
    const char* schedule;
    int accum; ///< pipeline.accum (PACI)
    double bBig; ///< with b = 2, m = 8
};

class NoiseScaleRecord : public ::testing::TestWithParam<Case>
{};

TEST_P(NoiseScaleRecord, MetricsAndSummaryCarryTheEstimate)
{
    const Case c = GetParam();
    const std::filesystem::path dir = std::filesystem::temp_directory_path()
        / ("bs_noise_record_" + std::string(c.schedule) + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    RunConfig config = bs::test::tinyRunConfig(c.schedule, 4, 4, 8);
    config.pipeline.accum = c.accum;
    SessionOptions o;
    o.outDir = dir;
    {
        auto session = RunSession::create(config, o);
        ASSERT_TRUE(session.has_value()) << session.error().describe();
        ASSERT_TRUE(session->runSteps(4).has_value());
        ASSERT_TRUE(session->finish().has_value());
    }
    auto run = loadRun(dir);
    ASSERT_TRUE(run) << run.error().describe();
    ASSERT_EQ(run->metrics.size(), 4u);
    const std::optional<NoiseScaleEstimate>& last = run->metrics.back().noise;
    ASSERT_TRUE(last) << "metrics.jsonl has no noise estimate for " << c.schedule;
    EXPECT_EQ(last->bSmall, 2.0);
    EXPECT_EQ(last->bBig, c.bBig);
    EXPECT_GT(last->updates, 0);
    ASSERT_EQ(last->stages.size(), 4u);
    double trace = 0.0;
    for (std::size_t s = 0; s < last->stages.size(); ++s) {
        EXPECT_EQ(last->stages[s].stage, static_cast<int>(s));
        EXPECT_GT(last->stages[s].traceSigma, 0.0) << "stage " << s;
        trace += last->stages[s].traceSigma;
    }
    EXPECT_DOUBLE_EQ(last->traceSigma, trace);
    // A few updates may leave the |G|² estimate <= 0 (then no ratio: null in the file, NaN here).
    const double ratio = simpleNoiseScale(last->traceSigma, last->gradSqNorm);
    EXPECT_TRUE(std::isnan(ratio) ? std::isnan(last->bSimple) : last->bSimple == ratio) << last->bSimple;
    ASSERT_TRUE(run->summary && run->summary->noiseScale);
    // The final state, after the last updates (compared as written: NaN is null).
    EXPECT_EQ(nlohmann::json(*run->summary->noiseScale).dump(), nlohmann::json(*last).dump());
    std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Schedules, NoiseScaleRecord,
    ::testing::Values(Case{"paci", 4, 8.0}, Case{"1f1b", 0, 16.0}, Case{"zb-h1", 0, 16.0}, Case{"async-1f1b", 0, 4.0}),
    [](const ::testing::TestParamInfo<Case>& param) {
        std::string name = param.param.schedule;
        std::replace(name.begin(), name.end(), '-', '_');
        return name;
    });

// Multi-process runs: each rank estimates its own stages; the merged record holds the model's.
TEST(NoiseScaleRecord, RanksEstimatesMergeIntoTheModels)
{
    auto rank = [](int stage, double gradSq, double trace) {
        return nlohmann::json(combineStages({StageNoiseScale{stage, gradSq, trace, trace / gradSq, 2.0, 8.0, 3}}));
    };
    const nlohmann::json merged = mergeNoise({rank(0, 1.0, 30.0), rank(1, 0.5, 10.0)}, 2);
    ASSERT_TRUE(merged.is_object()) << merged.dump();
    const auto n = merged.get<NoiseScaleEstimate>();
    EXPECT_EQ(n.gradSqNorm, 1.5);
    EXPECT_EQ(n.traceSigma, 40.0);
    EXPECT_DOUBLE_EQ(n.bSimple, 40.0 / 1.5);
    ASSERT_EQ(n.stages.size(), 2u);
    EXPECT_EQ(n.stages[1].stage, 1);
    EXPECT_TRUE(mergeNoise({rank(0, 1.0, 30.0), nullptr}, 2).is_null()); // a rank without one yet
    EXPECT_TRUE(mergeNoise({rank(0, 1.0, 30.0), rank(0, 1.0, 30.0)}, 2).is_null()); // a stage twice
    EXPECT_TRUE(mergeNoise({rank(0, 1.0, 30.0)}, 2).is_null()); // a stage missing
}

} // namespace
} // namespace bs::runtime
