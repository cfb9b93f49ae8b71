// Drift figures per model stage (chunk): a rank holding v chunks reports v entries, each with its
// own rank and chunk, and the run's mean weighs every sample of every stage alike.
#include "runtime/plan/common/stage_drift.h"

#include "runtime/plan/schedule/schedule.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

StageMetrics stage(int s, std::int64_t samples, double mean, double max, int lag)
{
    StageMetrics m;
    m.stage = s;
    m.driftSamples = samples;
    m.meanDrift = mean;
    m.maxDrift = max;
    m.maxLag = lag;
    return m;
}

TEST(StageDrift, LoopPlacementGivesEachChunkItsOwnEntry)
{
    // p = 2 ranks, v = 2: stages 0, 1, 2, 3 on ranks 0, 1, 0, 1 (chunks 0, 0, 1, 1).
    const std::vector<StageMetrics> stages{
        stage(0, 3, 4e-3, 8e-3, 3), stage(1, 1, 2e-3, 2e-3, 2), stage(2, 3, 1e-3, 3e-3, 1), stage(3, 1, 0.0, 0.0, 0)};
    const RunDrift d = runDrift(stages, rankOfStageFor(Placement::Loop, 2, 2));
    ASSERT_EQ(d.stages.size(), 4u);
    EXPECT_EQ(d.stages[2].rank, 0);
    EXPECT_EQ(d.stages[2].chunk, 1);
    EXPECT_EQ(d.stages[3].rank, 1);
    EXPECT_EQ(d.stages[3].chunk, 1);
    EXPECT_EQ(d.stages[0].chunk, 0);
    EXPECT_DOUBLE_EQ(d.stages[2].meanDrift, 1e-3); // chunk 1 of rank 0 keeps its own figure
    EXPECT_EQ(d.samples, 8);
    EXPECT_DOUBLE_EQ(d.meanDrift, (3 * 4e-3 + 1 * 2e-3 + 3 * 1e-3) / 8.0);
    EXPECT_DOUBLE_EQ(d.maxDrift, 8e-3);
    EXPECT_EQ(d.maxLag, 3);
    EXPECT_TRUE(d.measured());
}

TEST(StageDrift, VPlacementNumbersChunksInStageOrder)
{
    // V placement, p = 2: rank 0 holds stages 0 and 3, rank 1 stages 1 and 2.
    const std::vector<StageMetrics> stages(4, stage(0, 0, 0.0, 0.0, 0));
    const RunDrift d = runDrift(stages, rankOfStageFor(Placement::V, 2, 2));
    EXPECT_EQ(d.stages[3].rank, 0);
    EXPECT_EQ(d.stages[3].chunk, 1);
    EXPECT_EQ(d.stages[2].rank, 1);
    EXPECT_EQ(d.stages[2].chunk, 1);
    EXPECT_FALSE(d.measured()) << "no samples: not measured (a simulated run)";
}

TEST(StageDrift, OneStagePerRankWithoutAPlacement)
{
    const RunDrift d = runDrift({stage(0, 2, 1e-3, 2e-3, 1), stage(1, 2, 3e-3, 5e-3, 0)}, {});
    EXPECT_EQ(d.stages[1].rank, 1);
    EXPECT_EQ(d.stages[1].chunk, 0);
    EXPECT_DOUBLE_EQ(d.meanDrift, 2e-3);
}

} // namespace
} // namespace bs::runtime
