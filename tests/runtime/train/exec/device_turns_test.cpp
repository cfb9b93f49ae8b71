// Stages that share a device take turns on it under the threaded driver (TensorExecutor's
// per-device lock): a fake timer records how many actions are inside their timed span on each
// device at once. Stages on different devices (or the CPU) still run concurrently.
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/threaded_driver.h"
#include "runtime/train/exec/tensor_executor.h"
#include "tests/runtime/train/model/test_tokens.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace bs::runtime {
namespace {

struct DeviceLoad
{
    std::atomic<int> active{0};
    std::atomic<int> most{0};
    std::atomic<int> actions{0};
};

class CountingTimer final : public ActionTimer
{
public:
    explicit CountingTimer(DeviceLoad& load)
        : m_load(load)
    {}
    void begin() override
    {
        m_begin = hostNowNs();
        const int now = ++m_load.active;
        int most = m_load.most.load();
        while (now > most && !m_load.most.compare_exchange_weak(most, now)) {}
        std::this_thread::sleep_for(std::chrono::microseconds(200)); // widen the window a race would show in
    }
    Result<TimeNs> end() override
    {
        --m_load.active;
        ++m_load.actions;
        return hostNowNs() - m_begin;
    }
    TimeNs hostBegin() const override { return m_begin; }

private:
    DeviceLoad& m_load;
    TimeNs m_begin = 0;
};

TEST(DeviceTurns, StagesOnOneDeviceNeverOverlapUnderTheThreadedDriver)
{
    constexpr int kP = 4;
    const ModelOptions o = test::tinyModelOptions(kP, 4, WeightPolicy::Flush);
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    ASSERT_TRUE(model) << model.error().describe();
    TensorExecutor executor(*model);
    DeviceLoad gpu0, gpu1;
    std::vector<std::unique_ptr<ActionTimer>> timers;
    timers.push_back(std::make_unique<CountingTimer>(gpu0));
    timers.push_back(std::make_unique<CountingTimer>(gpu0));
    timers.push_back(std::make_unique<CountingTimer>(gpu1));
    timers.push_back(std::make_unique<CountingTimer>(gpu1));
    ASSERT_TRUE(executor.useDevices(std::move(timers), {0, 0, 1, 1}, nullptr));
    ScheduleParams p;
    p.name = "1f1b";
    p.stages = kP;
    p.microbatches = 4;
    p.batches = 2;
    auto schedule = makeSchedule(p);
    ASSERT_TRUE(schedule);
    profiler::TraceStore trace;
    auto stats = driveThreaded(*schedule, executor, trace);
    ASSERT_TRUE(stats) << stats.error().describe();
    EXPECT_EQ(gpu0.actions.load() + gpu1.actions.load(), kP * 2 * (2 * 4 + 1)); // F and B per micro-batch, U per batch
    EXPECT_EQ(gpu0.most.load(), 1) << "two stages of one device ran at once";
    EXPECT_EQ(gpu1.most.load(), 1);
}

TEST(DeviceTurns, OneTimerAndDevicePerStage)
{
    const ModelOptions o = test::tinyModelOptions(2, 2, WeightPolicy::Flush);
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    ASSERT_TRUE(model);
    TensorExecutor executor(*model);
    std::vector<std::unique_ptr<ActionTimer>> one;
    one.push_back(makeHostTimer());
    const Status s = executor.useDevices(std::move(one), {0, 0}, nullptr);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::InvalidArgument);
}

// Stage 0's tokens are host work (a token source, a file read): the executor has the model stage
// them before the action's timer starts, so a GPU forward's start event is not recorded while the
// host is still making its input, and the measured time is the forward's own.
TEST(ActionSpan, StageZerosTokensAreMadeBeforeItsTimedSpan)
{
    const ModelOptions o = test::tinyModelOptions(2, 1, WeightPolicy::Flush);
    constexpr auto kSlowTokens = std::chrono::milliseconds(400);
    std::atomic<int> calls{0};
    const TokenFn pattern = test::patternTokens(o.shape, o.microBatchSize);
    auto model = PipelineModel::create(o, [&](std::int64_t mb) {
        ++calls;
        std::this_thread::sleep_for(kSlowTokens);
        return pattern(mb);
    });
    ASSERT_TRUE(model) << model.error().describe();
    TensorExecutor executor(*model);
    auto forward = executor.perform(Action{0, ActionKind::Forward, 0});
    ASSERT_TRUE(forward) << forward.error().describe();
    EXPECT_EQ(calls.load(), 1) << "the tokens were made once, for the forward that used them";
    EXPECT_LT(forward->duration, std::chrono::nanoseconds(kSlowTokens).count())
        << "the token source's time is inside the forward's measured time";
    ASSERT_TRUE(executor.perform(Action{1, ActionKind::Forward, 0})) << "the last stage found stage 0's targets";
    EXPECT_TRUE(model->loss(0).has_value());
}

} // namespace
} // namespace bs::runtime
