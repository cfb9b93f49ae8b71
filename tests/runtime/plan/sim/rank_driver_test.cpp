// The rank driver: each rank runs only its own stage's program, waits for exactly the inputs the
// scheduler core's senderOf() names and sends what receiverOf() names; together the ranks record
// the serial driver's actions and versions. Ranks here are threads over an in-memory mailbox.

#include "runtime/plan/sim/rank_driver.h"

#include "runtime/plan/schedule/catalogue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

namespace bs::runtime {
namespace {

class CountingExecutor final : public ActionExecutor
{
public:
    Result<ActionOutcome> perform(const Action& a) override
    {
        if (failAt && *failAt == a) {
            return makeError(ErrorCode::Diverged, "loss is NaN");
        }
        return ActionOutcome{10, 1, 1};
    }
    TimeNs commTime(int, int, std::int64_t) const override { return 0; }
    std::optional<Action> failAt;
};

// (to stage, micro-batch, is gradient) -> sent; receive blocks until it is.
class Mailbox
{
public:
    void put(int to, int mb, bool gradient)
    {
        const std::lock_guard lock(m_mutex);
        m_sent.insert({to, mb, gradient});
        m_cv.notify_all();
    }
    Status take(int to, int mb, bool gradient)
    {
        std::unique_lock lock(m_mutex);
        if (!m_cv.wait_for(lock, std::chrono::seconds(10), [&] { return m_sent.count({to, mb, gradient}) > 0; })) {
            return makeError(ErrorCode::Deadlock, "nothing arrived", "stage " + std::to_string(to));
        }
        m_sent.erase({to, mb, gradient});
        return ok();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::set<std::tuple<int, int, bool>> m_sent;
};

struct RankRun
{
    std::vector<Result<DriveStats>> stats;
    std::vector<std::vector<profiler::TraceEvent>> events; // per rank
};

RankRun runRanks(const Schedule& schedule, CountingExecutor& executor, std::int32_t offset = 0)
{
    const int p = schedule.stages();
    Mailbox mailbox;
    RankRun run;
    run.stats.assign(static_cast<std::size_t>(p), makeError(ErrorCode::Internal, "not run"));
    run.events.resize(static_cast<std::size_t>(p));
    std::vector<profiler::TraceStore> stores(static_cast<std::size_t>(p));
    const auto zero = std::chrono::steady_clock::now();
    std::vector<std::thread> ranks;
    for (int s = 0; s < p; ++s) {
        ranks.emplace_back([&, s] {
            RankLinks links;
            links.now = [zero] {
                return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - zero)
                    .count();
            };
            links.receive = [&, s](const Action& a, int from) {
                EXPECT_EQ(from, senderOf(a, p));
                return mailbox.take(s, a.microbatch, from > s);
            };
            links.send = [&, s](const Action& a, int to) {
                EXPECT_EQ(to, receiverOf(a, p));
                mailbox.put(to, a.microbatch, to < s);
                return ok();
            };
            DriveOptions options;
            options.microbatchOffset = offset;
            run.stats[static_cast<std::size_t>(s)] =
                driveRank(schedule, s, executor, stores[static_cast<std::size_t>(s)], options, links);
        });
    }
    for (auto& t : ranks) {
        t.join();
    }
    for (int s = 0; s < p; ++s) {
        run.events[static_cast<std::size_t>(s)] = stores[static_cast<std::size_t>(s)].snapshot()->toVector();
    }
    return run;
}

TEST(SchedulerHelpers, SenderOfIsTheInverseOfReceiverOf)
{
    EXPECT_EQ(senderOf(forward(0, 3), 4), -1);
    EXPECT_EQ(senderOf(forward(2, 3), 4), 1);
    EXPECT_EQ(senderOf(backward(3, 3), 4), -1);
    EXPECT_EQ(senderOf(backwardInput(1, 3), 4), 2);
    EXPECT_EQ(senderOf(backwardWeight(1, 3), 4), -1);
    EXPECT_EQ(senderOf(update(1, 0, 0, 3), 4), -1);
    EXPECT_EQ(receiverOf(forward(2, 3), 4), 3);
    EXPECT_EQ(receiverOf(backward(2, 3), 4), 1);
}

TEST(RankDriver, RanksTogetherRecordTheSerialDriversActionsAndVersions)
{
    for (const char* name : {"1f1b", "zb-h1", "paci", "pipedream"}) {
        auto schedule = makeSchedule({.name = name, .stages = 4, .microbatches = 4, .batches = 2});
        ASSERT_TRUE(schedule);
        CountingExecutor executor;
        profiler::TraceStore serialStore;
        DriveOptions serialOptions;
        serialOptions.microbatchOffset = 8;
        auto serial = drive(*schedule, executor, serialStore, serialOptions);
        ASSERT_TRUE(serial);
        std::map<int, std::vector<std::tuple<int, int, int, int>>> expected; // stage -> (kind, mb, version, aux)
        for (const auto& e : serialStore.snapshot()->toVector()) {
            expected[e.stage].emplace_back(static_cast<int>(e.kind), e.microbatch, e.version, e.aux);
        }
        RankRun ranks = runRanks(*schedule, executor, 8);
        for (int s = 0; s < 4; ++s) {
            const auto& stats = ranks.stats[static_cast<std::size_t>(s)];
            ASSERT_TRUE(stats) << name << " rank " << s << ": " << stats.error().describe();
            EXPECT_EQ(
                stats->finalVersions[static_cast<std::size_t>(s)], serial->finalVersions[static_cast<std::size_t>(s)]);
            std::vector<std::tuple<int, int, int, int>> got;
            for (const auto& e : ranks.events[static_cast<std::size_t>(s)]) {
                EXPECT_EQ(e.stage, s);
                EXPECT_LE(e.start, e.end);
                got.emplace_back(static_cast<int>(e.kind), e.microbatch, e.version, e.aux);
            }
            EXPECT_EQ(got, expected[s]) << name << " rank " << s;
        }
    }
}

TEST(RankDriver, AnExecutorErrorNamesTheStageAndAction)
{
    auto schedule = makeSchedule({.name = "1f1b", .stages = 1, .microbatches = 4});
    ASSERT_TRUE(schedule);
    CountingExecutor executor;
    executor.failAt = forward(0, 2);
    RankRun ranks = runRanks(*schedule, executor);
    ASSERT_FALSE(ranks.stats[0]);
    EXPECT_EQ(ranks.stats[0].error().code, ErrorCode::Diverged);
    EXPECT_NE(ranks.stats[0].error().context.find("stage 0, 0F2"), std::string::npos)
        << ranks.stats[0].error().describe();
    EXPECT_EQ(ranks.events[0].size(), 4U); // 0F0 0B0 0F1 0B1 recorded before it
}

TEST(RankDriver, StopIsHonouredBeforeTheFirstAction)
{
    auto schedule = makeSchedule({.name = "1f1b", .stages = 1, .microbatches = 4});
    ASSERT_TRUE(schedule);
    CountingExecutor executor;
    profiler::TraceStore store;
    std::atomic<bool> stop{true};
    DriveOptions options;
    options.stop = &stop;
    RankLinks links;
    links.now = [] { return TimeNs{0}; };
    auto stats = driveRank(*schedule, 0, executor, store, options, links);
    ASSERT_FALSE(stats);
    EXPECT_EQ(stats.error().code, ErrorCode::Cancelled);
    EXPECT_EQ(store.size(), 0U);
}

} // namespace
} // namespace bs::runtime
