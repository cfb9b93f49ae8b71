// A run's partition: measured and explicit layer-unit partitions train, and the run records the
// split it used in its summary (summary.json's "partition").
#include "runtime/train/exec/run_session.h"
#include "tests/support/tiny_run_config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <numeric>

namespace bs::runtime {
namespace {

TEST(PartitionRun, MeasuredPartitionTrainsAndIsRecorded)
{
    RunConfig c = test::tinyRunConfig("paci", 2);
    c.pipeline.accum = 4;
    c.pipeline.partition = "measured";
    auto session = RunSession::create(c, {});
    ASSERT_TRUE(session) << session.error().describe();
    ASSERT_TRUE(session->run());
    const RunSummary s = session->summary();
    ASSERT_TRUE(s.partition);
    EXPECT_EQ(s.partition->mode, "measured");
    EXPECT_EQ(s.partition->costs, "measured");
    ASSERT_EQ(s.partition->unitsPerStage.size(), 4u);
    EXPECT_EQ(std::accumulate(s.partition->unitsPerStage.begin(), s.partition->unitsPerStage.end(), 0), 7);
    EXPECT_EQ(std::accumulate(s.partition->layersPerStage.begin(), s.partition->layersPerStage.end(), 0), 4);
    EXPECT_GE(s.partition->predictedImbalance, 1.0);
    EXPECT_EQ(s.losses.size(), 2u);
    const nlohmann::json j = s;
    EXPECT_EQ(j["partition"]["mode"], "measured");
    EXPECT_EQ(j["partition"]["units_per_stage"].size(), 4u);
}

TEST(PartitionRun, ExplicitUnitsGiveTheSameLossesAsTheEqualBlockSplit)
{
    // One block per stage, written as blocks and as layer units (embedding with stage 0, final
    // norm and head with stage 3): the same model on the same stages.
    RunConfig blocks = test::tinyRunConfig("1f1b", 2);
    blocks.pipeline.layersPerStage = {1, 1, 1, 1};
    RunConfig units = blocks;
    units.pipeline.layersPerStage.clear();
    units.pipeline.partition = "explicit";
    units.pipeline.partitionUnits = {2, 1, 1, 3};
    auto a = RunSession::create(blocks, {});
    auto b = RunSession::create(units, {});
    ASSERT_TRUE(a) << a.error().describe();
    ASSERT_TRUE(b) << b.error().describe();
    ASSERT_TRUE(a->run());
    ASSERT_TRUE(b->run());
    EXPECT_EQ(a->summary().losses, b->summary().losses); // the same weights on the same stages: bit-identical
    EXPECT_EQ(b->summary().partition->mode, "explicit");
    EXPECT_EQ(a->summary().partition->unitsPerStage, (std::vector<int>{2, 1, 1, 3}));
}

} // namespace
} // namespace bs::runtime
