// simulate() takes the analysis's first walk on a second thread, right behind the scheduler core
// as it writes a large schedule's trace. simulateSchedule() of the same schedule analyses the
// trace after the drive, on the caller's thread alone: the two reports must be the same, for every
// schedule, placement and weight policy, whether the walk beside is stopped (the analysis takes the
// drive's replayed copies in one step), taken over where the drive said it replays, or finished.

#include "profiler/analysis/analyze.h"
#include "profiler/analysis/report_json.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/simulator.h"

#include <gtest/gtest.h>

#include <string>

namespace bs::runtime {
namespace {

TEST(AnalysisBesideTheDrive, ReportEqualsTheOneAnalysedAfterTheDriveForEverySchedule)
{
    for (const auto& info : scheduleCatalogue()) {
        SCOPED_TRACE(info.name);
        // 80 batches of 16 on 8 ranks: over the 16 384 actions from which the walk moves beside.
        SimulationRequest request{{.name = info.name,
                                      .stages = 8,
                                      .microbatches = 16,
                                      .accum = info.takesAccumWindow() ? 4 : 0,
                                      .batches = 80},
            CostModel::uniform(8, 1'000'000, 900'000, 700'000, 50'000, 100'000), 1};
        request.costs.bytesKnown = true;
        request.costs.stages[3].activationBytes *= 3; // uneven memory: the slots' figures differ by rank
        auto beside = simulate(request);
        ASSERT_TRUE(beside) << beside.error().describe();
        ASSERT_GE(beside->schedule.actionCount(), 16'384u);
        auto after = simulateSchedule(beside->schedule, request.costs);
        ASSERT_TRUE(after) << after.error().describe();
        ASSERT_EQ(beside->trace->size(), after->trace->size());
        EXPECT_EQ(profiler::toJson(beside->report).dump(), profiler::toJson(after->report).dump());
        ASSERT_EQ(beside->report.bubbles.size(), after->report.bubbles.size());
        for (std::size_t i = 0; i < beside->report.bubbles.size(); ++i) {
            const auto& a = beside->report.bubbles[i];
            const auto& b = after->report.bubbles[i];
            ASSERT_TRUE(a.start == b.start && a.end == b.end && a.stage == b.stage && a.cause == b.cause) << i;
        }
        EXPECT_GT(beside->report.totalIdle, 0);
    }
}

// A drive whose copies the analysis takes in one step stops the walk beside it
// (profiler::takesCopiesInOneStep); one that replays too few copies for that, or none (uneven
// stages an asynchronous schedule does not settle under), leaves the walk to the thread beside,
// which stops where the drive said it replays and is taken over there. Every way, the report is
// the one the same events give walked on one thread without the drive's word that they repeat.
TEST(AnalysisBesideTheDrive, ReportIsTheSameWhetherTheWalkBesideIsStoppedTakenOverOrFinished)
{
    std::size_t takenOver = 0, leapt = 0, walkedWhole = 0;
    for (const auto& info : scheduleCatalogue()) {
        for (const int m : {16, 128}) {
            SCOPED_TRACE(info.name + " m=" + std::to_string(m));
            // m = 128, 6 batches: over 16 384 actions, but two or three copies after the steady
            // state is found (too few to leap); m = 16, 80 batches: dozens.
            SimulationRequest request{{.name = info.name,
                                          .stages = 8,
                                          .microbatches = m,
                                          .accum = info.takesAccumWindow() ? 4 : 0,
                                          .batches = m == 16 ? 80 : 6},
                CostModel::uniform(8, 1'000'000, 900'000, 700'000, 50'000, 100'000), 1};
            for (int s = 0; s < 8; ++s) {
                request.costs.stages[static_cast<std::size_t>(s)].forward += 37'000 * (s % 3);
            }
            auto result = simulate(request);
            if (!result) {
                continue; // a limit of this schedule at m = 128 (DualPipeV's, say)
            }
            if (result->schedule.actionCount() < 16'384) {
                continue; // validated inline: no walk beside
            }
            const auto options = analysisOptionsFor(result->schedule, &request.costs);
            if (!result->trace->repeat()) {
                ++walkedWhole;
            } else if (profiler::takesCopiesInOneStep(*result->trace, options)) {
                ++leapt;
            } else {
                ++takenOver;
            }
            const auto walked = profiler::analyzeOnOneThread(
                *profiler::makeSnapshot(result->trace->meta(), result->trace->toVector()), options);
            EXPECT_EQ(profiler::toJson(result->report).dump(), profiler::toJson(walked).dump());
            ASSERT_EQ(result->report.bubbles.size(), walked.bubbles.size());
        }
    }
    // Each way was taken, or this test would not see it.
    EXPECT_GT(takenOver, 0u);
    EXPECT_GT(leapt, 0u);
    EXPECT_GT(walkedWhole, 0u);
}

// A large simulation refused before its drive starts (here: its micro-batch size) still ends, with
// the error: the thread beside it, waiting for a trace to follow, is told there will be none.
TEST(AnalysisBesideTheDrive, ASimulationRefusedBeforeItsDriveEndsWithTheError)
{
    SimulationRequest request{{.name = "interleaved-1f1b", .stages = 8, .microbatches = 16, .batches = 80},
        CostModel::uniform(8, 1'000'000, 1'000'000, 1'000'000, 0, 100'000), 0};
    const auto result = simulate(request);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("micro-batch-size"), std::string::npos) << result.error().message;
}

} // namespace
} // namespace bs::runtime
