// resolvePipeline(): the one reading of (schedule, p, m, a, v) that the CLI, the config, the
// what-if and the tuner share; above all the batch per update each schedule means.
#include "runtime/plan/schedule/catalogue.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

PipelineSettings resolved(
    const std::string& name, int p, int m, int a, int v = 0, MicrobatchChoice choice = MicrobatchChoice::AsGiven)
{
    auto r = resolvePipeline(name, p, m, a, v, 0, choice);
    EXPECT_TRUE(r) << (r ? "" : r.error().describe());
    return r ? *r : PipelineSettings{};
}

TEST(PipelineSettings, BatchPerUpdateIsWhatEachScheduleUpdatesOn)
{
    // Flush: one update per global batch, m·b.
    EXPECT_EQ(resolved("1f1b", 8, 16, 0).batchPerUpdate(8), 128);
    EXPECT_EQ(resolved("gpipe", 8, 16, 16).batchPerUpdate(8), 128);
    // PACI: each stage updates every a local backwards, a·b, whatever m is.
    const PipelineSettings paci = resolved("paci", 8, 16, 4);
    EXPECT_EQ(paci.batchPerUpdate(8), 32);
    EXPECT_EQ(paci.globalBatch(8), 128);
    EXPECT_EQ(paci.accum(), 4);
    // Per-micro-batch asynchronous schedules: b.
    EXPECT_EQ(resolved("pipedream", 8, 16, 0).batchPerUpdate(8), 8);
    EXPECT_EQ(resolved("async-1f1b", 8, 16, 0).batchPerUpdate(8), 8);
    // 2BW updates every m micro-batches.
    EXPECT_EQ(resolved("2bw", 8, 16, 0).batchPerUpdate(8), 128);
}

TEST(PipelineSettings, ZeroMeansTheOther)
{
    const PipelineSettings fromWindow = resolved("paci", 8, 0, 4);
    EXPECT_EQ(fromWindow.microbatches, 4); // a windowed schedule's batch is one window
    EXPECT_EQ(fromWindow.window, 4);
    const PipelineSettings wholeBatch = resolved("paci", 8, 8, 0);
    EXPECT_EQ(wholeBatch.window, 8); // a = 0: m
    EXPECT_EQ(resolved("1f1b", 8, 0, 6).microbatches, 6); // "a = m here"
    EXPECT_EQ(resolved("1f1b", 8, 8, 0).shownWindow(), 8);
    EXPECT_EQ(resolved("1f1b", 8, 8, 0).accum(), 0);
    EXPECT_FALSE(resolvePipeline("paci", 8, 0, 0, 0));
}

TEST(PipelineSettings, AnAccumOnAScheduleWithoutAWindowIsRefusedOrTakenAsM)
{
    auto refused = resolvePipeline("1f1b", 8, 8, 4, 0);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("accum"), std::string::npos);
    EXPECT_EQ(resolved("1f1b", 8, 8, 4, 0, MicrobatchChoice::WholeWindows).microbatches, 4);
}

TEST(PipelineSettings, WholeWindowsFollowTheSchedulesRules)
{
    // paci-interleaved at p = 4: m a multiple of p, so a = 2 simulates m = 4, two windows a batch.
    const PipelineSettings pi = resolved("paci-interleaved", 4, 0, 2, 0, MicrobatchChoice::WholeWindows);
    EXPECT_EQ(pi.microbatches, 4);
    EXPECT_EQ(pi.window, 2);
    EXPECT_EQ(pi.stagesPerRank, 2); // the schedule's own v
    EXPECT_EQ(pi.stages(), 8);
    // As given, the same request keeps m = 2 and makeSchedule() names the field.
    const PipelineSettings given = resolved("paci-interleaved", 4, 0, 2);
    EXPECT_EQ(given.microbatches, 2);
    auto schedule = makeSchedule(given.params(1));
    ASSERT_FALSE(schedule);
    EXPECT_NE(schedule.error().message.find("microbatches"), std::string::npos);
    // A run's own m of whole windows is kept; one that is not becomes whole windows.
    EXPECT_EQ(resolved("paci", 8, 16, 4, 0, MicrobatchChoice::WholeWindows).microbatches, 16);
    EXPECT_EQ(resolved("paci", 8, 6, 4, 0, MicrobatchChoice::WholeWindows).microbatches, 4);
    // A flush schedule that refuses m = a takes the fewest multiple of a its rules allow (lcm(6, 4)).
    EXPECT_EQ(resolved("interleaved-1f1b", 4, 0, 6, 0, MicrobatchChoice::WholeWindows).microbatches, 12);
}

TEST(PipelineSettings, StagesPerRankIsTypedAndBoundedOnce)
{
    EXPECT_EQ(resolved("interleaved-1f1b", 4, 8, 0, 0).stagesPerRank, 2);
    EXPECT_EQ(resolved("interleaved-1f1b", 4, 8, 0, 4).stagesPerRank, 4);
    EXPECT_EQ(resolved("zb-v", 4, 8, 0, 0).stagesPerRank, 2);
    EXPECT_EQ(resolved("1f1b", 4, 8, 0, 0).stagesPerRank, 1);
    for (int bad : {kMaxStagesPerRank + 1, -1}) {
        auto r = resolvePipeline("interleaved-1f1b", 4, 8, 0, bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_NE(r.error().message.find("stages-per-rank"), std::string::npos);
    }
    EXPECT_FALSE(resolvePipeline("1f1b", 4, 8, 0, 2));
    EXPECT_EQ(kMaxStagesPerRank, profiler::kMaxStagesPerLane); // one bound for a run and a trace
}

TEST(PipelineSettings, ParamsBuildTheSchedule)
{
    for (const auto& info : scheduleCatalogue()) {
        const int p = 4;
        const int m = info.minMicrobatchesPerRank > 0 ? info.minMicrobatchesPerRank * p : 8;
        auto r = resolvePipeline(info.name, p, m, 0, 0, 0, MicrobatchChoice::WholeWindows);
        ASSERT_TRUE(r) << info.name;
        auto schedule = makeSchedule(r->params(2));
        ASSERT_TRUE(schedule) << info.name << ": " << schedule.error().describe();
        EXPECT_EQ(schedule->stagesPerRank(), r->stagesPerRank) << info.name;
        EXPECT_EQ(schedule->params.microbatches, r->microbatches) << info.name;
    }
    EXPECT_FALSE(resolvePipeline("no-such", 4, 8, 0, 0));
}

} // namespace
} // namespace bs::runtime
