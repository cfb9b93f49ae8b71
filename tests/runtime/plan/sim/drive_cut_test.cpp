// DriveOptions::cut (a live Apply's batch boundary): for every schedule in the catalogue, a cut
// requested mid-run ends the schedule exactly at a global-batch boundary, with every micro-batch
// before it complete (F and B/I+W on every stage, its updates applied) and none after it started.
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/cost_model_executor.h"
#include "runtime/plan/sim/scheduler_core.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>

namespace bs::runtime {
namespace {

constexpr TimeNs kF = 1000;

struct CutCase
{
    std::string schedule;
    int accum = 0;
};

class DriveCut : public ::testing::TestWithParam<CutCase>
{};

TEST_P(DriveCut, EndsExactlyAtABatchBoundaryWithNothingLost)
{
    constexpr int kP = 4, kM = 4, kBatches = 6;
    const CutCase param = GetParam();
    auto schedule = makeSchedule(
        {.name = param.schedule, .stages = kP, .microbatches = kM, .accum = param.accum, .batches = kBatches});
    ASSERT_TRUE(schedule) << schedule.error().describe();
    for (int requestAfter : {1, kM, kM + 1, 2 * kM + 3}) { // stage-0 forwards seen when the cut comes
        CostModelExecutor executor(CostModel::uniform(kP, kF, 2 * kF, kF));
        profiler::TraceStore store;
        std::atomic<bool> cut{false};
        int forwards0 = 0;
        DriveOptions options;
        options.cut = &cut;
        options.cutEvery = kM;
        options.onAction = [&](const Action& a, const profiler::TraceEvent&) {
            if (a.stage == 0 && a.kind == ActionKind::Forward && ++forwards0 == requestAfter) {
                cut = true;
            }
        };
        auto stats = drive(*schedule, executor, store, options);
        ASSERT_TRUE(stats) << param.schedule << ": " << stats.error().describe();
        // The boundary: the end of the batch whose micro-batches stage 0 was starting.
        const int expected = (requestAfter + kM - 1) / kM * kM;
        ASSERT_EQ(stats->cutAt, expected) << param.schedule << " after " << requestAfter;
        // Per stage: F and (B or W) of exactly the micro-batches < cutAt; the updates applied all
        // of their backward passes.
        std::map<std::pair<int, int>, int> done; // (stage, mb) -> F + B/W count
        std::vector<int> applied(kP, 0);
        store.snapshot()->forEach([&](const profiler::TraceEvent& e) {
            if (!e.isCompute()) {
                return;
            }
            if (e.kind == profiler::EventKind::Update) {
                applied[e.stage] += e.aux;
                return;
            }
            EXPECT_LT(e.microbatch, expected) << param.schedule << ": " << eventLetter(e.kind) << e.microbatch;
            if (e.kind != profiler::EventKind::BackwardInput) {
                done[{e.stage, e.microbatch}] += 1;
            }
        });
        for (int s = 0; s < kP; ++s) {
            for (int mb = 0; mb < expected; ++mb) {
                EXPECT_EQ((done[{s, mb}]), 2) << param.schedule << " stage " << s << " mb " << mb;
            }
            EXPECT_EQ(applied[static_cast<std::size_t>(s)], expected) << param.schedule << " stage " << s;
        }
    }
}

TEST(DriveCut, ACutAfterTheLastBoundaryRunsEverything)
{
    auto schedule = makeSchedule({.name = "paci", .stages = 4, .microbatches = 4, .accum = 2, .batches = 2});
    ASSERT_TRUE(schedule);
    CostModelExecutor executor(CostModel::uniform(4, kF, 2 * kF, kF));
    profiler::TraceStore store;
    std::atomic<bool> cut{false};
    DriveOptions options;
    options.cut = &cut;
    options.cutEvery = 4;
    options.onAction = [&](const Action& a, const profiler::TraceEvent&) {
        if (a.stage == 0 && a.kind == ActionKind::Forward && a.microbatch == 7) {
            cut = true; // stage 0 already started the last batch: its end is the schedule's end
        }
    };
    auto stats = drive(*schedule, executor, store, options);
    ASSERT_TRUE(stats) << stats.error().describe();
    EXPECT_EQ(stats->cutAt, -1);
    EXPECT_EQ(stats->actions, schedule->actionCount());
}

TEST(DriveCut, ACutBeforeAnythingStartedRunsNothing)
{
    auto schedule = makeSchedule({.name = "1f1b", .stages = 2, .microbatches = 2, .batches = 2});
    ASSERT_TRUE(schedule);
    CostModelExecutor executor(CostModel::uniform(2, kF, kF, kF));
    profiler::TraceStore store;
    std::atomic<bool> cut{true};
    DriveOptions options;
    options.cut = &cut;
    options.cutEvery = 2;
    auto stats = drive(*schedule, executor, store, options);
    ASSERT_TRUE(stats) << stats.error().describe();
    EXPECT_EQ(stats->cutAt, 0);
    EXPECT_EQ(stats->actions, 0u);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, DriveCut,
    ::testing::Values(CutCase{"gpipe"}, CutCase{"1f1b"}, CutCase{"zb-h1"}, CutCase{"zb-h2"}, CutCase{"pipedream"},
        CutCase{"2bw"}, CutCase{"async-1f1b"}, CutCase{"paci", 2}, CutCase{"paci", 4}, CutCase{"paci", 1}),
    [](const ::testing::TestParamInfo<CutCase>& param) {
        std::string n = param.param.schedule + "_a" + std::to_string(param.param.accum);
        for (char& ch : n) {
            ch = ch == '-' ? '_' : ch;
        }
        return n;
    });

} // namespace
} // namespace bs::runtime
