// The threaded driver runs each stage on its own thread: same per-stage order as the serial
// driver, clean stop from any state, first error wins. Run under TSan in CI.

#include "runtime/plan/sim/threaded_driver.h"

#include "runtime/plan/schedule/catalogue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

namespace bs::runtime {
namespace {

// Sleeps a scripted time per action; records the order each stage saw (per-stage state only).
class SleepExecutor final : public ActionExecutor
{
public:
    explicit SleepExecutor(int stages, std::chrono::microseconds perAction = std::chrono::microseconds(200))
        : m_seen(static_cast<std::size_t>(stages))
        , m_perAction(perAction)
    {}
    Result<ActionOutcome> perform(const Action& a) override
    {
        m_seen[static_cast<std::size_t>(a.stage)].push_back(a);
        const int inside = ++m_inside;
        int seen = m_maxInside.load();
        while (inside > seen && !m_maxInside.compare_exchange_weak(seen, inside)) {}
        if (a.kind != ActionKind::Update) {
            std::this_thread::sleep_for(m_perAction);
        }
        --m_inside;
        if (failAt && *failAt == a) {
            return makeError(ErrorCode::Diverged, "loss is NaN");
        }
        return ActionOutcome{0, 1, 1};
    }
    TimeNs commTime(int, int, std::int64_t) const override { return 0; }

    std::vector<std::vector<Action>> m_seen;
    std::optional<Action> failAt;
    std::atomic<int> m_inside{0};
    std::atomic<int> m_maxInside{0}; ///< most stages inside perform() at once

private:
    std::chrono::microseconds m_perAction;
};

TEST(ThreadedDriver, EachStageRunsItsProgramInOrder)
{
    for (const char* name : {"1f1b", "zb-h1", "paci", "pipedream"}) {
        auto schedule = makeSchedule({.name = name, .stages = 4, .microbatches = 4, .batches = 3});
        ASSERT_TRUE(schedule);
        SleepExecutor executor(4, std::chrono::microseconds(50));
        profiler::TraceStore store;
        auto stats = driveThreaded(*schedule, executor, store);
        ASSERT_TRUE(stats) << stats.error().describe();
        EXPECT_EQ(executor.m_seen, schedule->programs) << name;
        EXPECT_EQ(store.size(), schedule->actionCount());
        EXPECT_EQ(stats->finalVersions, std::vector<int>(4, name == std::string("pipedream") ? 12 : 3)) << name;
        EXPECT_GT(stats->makespan, 0);
    }
}

TEST(ThreadedDriver, StagesOverlapInTime)
{
    // 2 stages, 1F1B: both stages are inside an action at the same time, and the recorded events
    // of the two stages overlap. (Counted, not timed: a loaded machine must not fail this.)
    auto schedule = makeSchedule({.name = "1f1b", .stages = 2, .microbatches = 8});
    ASSERT_TRUE(schedule);
    SleepExecutor executor(2, std::chrono::milliseconds(2));
    profiler::TraceStore store;
    auto stats = driveThreaded(*schedule, executor, store);
    ASSERT_TRUE(stats);
    EXPECT_EQ(executor.m_maxInside.load(), 2);
    const auto events = store.snapshot()->toVector();
    bool overlap = false;
    for (const auto& a : events) {
        for (const auto& b : events) {
            overlap = overlap || (a.stage != b.stage && a.start < b.end && b.start < a.end);
        }
    }
    EXPECT_TRUE(overlap);
}

TEST(ThreadedDriver, StopEndsEveryStageQuickly)
{
    auto schedule = makeSchedule({.name = "paci", .stages = 4, .microbatches = 8, .batches = 1000});
    ASSERT_TRUE(schedule);
    SleepExecutor executor(4, std::chrono::microseconds(100));
    profiler::TraceStore store;
    std::atomic<bool> stop{false};
    DriveOptions options;
    options.stop = &stop;
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        stop = true;
    });
    const auto t0 = std::chrono::steady_clock::now();
    auto stats = driveThreaded(*schedule, executor, store, options);
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    stopper.join();
    ASSERT_FALSE(stats);
    EXPECT_EQ(stats.error().code, ErrorCode::Cancelled);
    EXPECT_LT(elapsed, std::chrono::seconds(1));
    EXPECT_GT(store.size(), 0u); // what was recorded is kept
}

TEST(ThreadedDriver, FirstStageErrorStopsTheOthersAndNamesTheStage)
{
    auto schedule = makeSchedule({.name = "1f1b", .stages = 4, .microbatches = 8, .batches = 50});
    ASSERT_TRUE(schedule);
    SleepExecutor executor(4, std::chrono::microseconds(50));
    executor.failAt = backward(2, 5);
    profiler::TraceStore store;
    auto stats = driveThreaded(*schedule, executor, store);
    ASSERT_FALSE(stats);
    EXPECT_EQ(stats.error().code, ErrorCode::Diverged);
    EXPECT_NE(stats.error().context.find("stage 2, 2B5"), std::string::npos) << stats.error().context;
}

TEST(ThreadedDriver, InputTimeoutNamesTheWaitingStage)
{
    Schedule s;
    s.params = {.name = "custom", .stages = 2, .microbatches = 2};
    s.programs = {{forward(0, 0), backward(0, 0), forward(0, 1), backward(0, 1)},
        {forward(1, 0), forward(1, 1), backward(1, 0), backward(1, 1)}};
    SleepExecutor executor(2, std::chrono::microseconds(10));
    profiler::TraceStore store;
    ThreadedOptions threaded;
    threaded.inputTimeout = std::chrono::milliseconds(100);
    auto stats = driveThreaded(s, executor, store, {}, threaded);
    ASSERT_FALSE(stats);
    EXPECT_EQ(stats.error().code, ErrorCode::Deadlock);
    EXPECT_NE(stats.error().message.find("waited too long"), std::string::npos);
}

} // namespace
} // namespace bs::runtime
