// The threaded executor (driveThreaded + TensorExecutor, one thread per stage) trains exactly what
// the serial driver trains: bit-identical losses for every catalogue schedule, p = 2..4, with one
// intra-op thread and no dropout. Stop returns promptly from any moment; a stage error stops the
// other stages and surfaces with its original message.
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/threaded_driver.h"
#include "runtime/train/exec/run_session.h"
#include "runtime/train/exec/tensor_executor.h"
#include "tests/runtime/train/model/test_tokens.h"
#include "tests/support/tiny_run_config.h"
#include "tests/support/train_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>

namespace bs::runtime {
namespace {

using namespace std::chrono_literals;

RunConfig tinyConfig(const std::string& schedule, int stages, int steps)
{
    RunConfig c = bs::test::tinyRunConfig(schedule, steps, stages);
    c.pipeline.accum = schedule == "paci" ? 2 : 0;
    c.device.intraOpThreads = 1; // reductions in the same order in both runs
    return c;
}

SessionOptions optionsFor(ExecutorKind kind)
{
    SessionOptions o;
    o.executor = kind;
    return o;
}

SessionOptions threadedOptions()
{
    return optionsFor(ExecutorKind::Threaded);
}

struct Outcome
{
    std::vector<double> losses;
    std::shared_ptr<const profiler::TraceSnapshot> trace;
};

Outcome train(const RunConfig& config, ExecutorKind executor)
{
    SessionOptions o;
    o.executor = executor;
    bs::test::TrainedRun run = bs::test::trainRun(config, o);
    return {run.summary.losses, run.trace};
}

class ThreadedMatchesSerial : public ::testing::TestWithParam<std::tuple<std::string, int>>
{};

TEST_P(ThreadedMatchesSerial, LossesAreBitIdentical)
{
    const auto& [schedule, p] = GetParam();
    const RunConfig config = tinyConfig(schedule, p, 3);
    const Outcome serial = train(config, ExecutorKind::Serial);
    const Outcome threaded = train(config, ExecutorKind::Threaded);
    ASSERT_EQ(serial.losses.size(), 3u);
    ASSERT_EQ(threaded.losses.size(), serial.losses.size());
    for (std::size_t i = 0; i < serial.losses.size(); ++i) {
        EXPECT_TRUE(std::isfinite(serial.losses[i]));
        EXPECT_EQ(threaded.losses[i], serial.losses[i]) << schedule << " p=" << p << " step " << i;
    }
    // Same actions, one lane per stage, on the wall clock.
    ASSERT_TRUE(threaded.trace && serial.trace);
    EXPECT_EQ(threaded.trace->size(), serial.trace->size());
    EXPECT_EQ(threaded.trace->meta().clock, "wall");
    std::set<int> lanes;
    threaded.trace->forEach([&](const profiler::TraceEvent& e) { lanes.insert(e.stage); });
    EXPECT_EQ(static_cast<int>(lanes.size()), p);
}

INSTANTIATE_TEST_SUITE_P(Schedules, ThreadedMatchesSerial,
    ::testing::Combine(::testing::Values("gpipe", "1f1b", "zb-h1", "zb-h2", "pipedream", "2bw", "async-1f1b", "paci"),
        ::testing::Values(2, 3, 4)),
    [](const ::testing::TestParamInfo<std::tuple<std::string, int>>& param) {
        std::string n = std::get<0>(param.param) + "_p" + std::to_string(std::get<1>(param.param));
        std::replace(n.begin(), n.end(), '-', '_');
        return n;
    });

// A run long enough that every stop below lands mid-run (warm-up, steady state, or a drain).
TEST(ThreadedExecutor, StopFromAnyMomentReturnsWithinOneSecond)
{
    for (const auto delay : {0ms, 3ms, 15ms, 40ms, 120ms}) {
        RunConfig config = tinyConfig("1f1b", 4, 400);
        auto session = RunSession::create(config, threadedOptions());
        ASSERT_TRUE(session.has_value()) << session.error().describe();
        auto result = std::async(std::launch::async, [&] { return session->runSteps(400); });
        std::this_thread::sleep_for(delay);
        const auto stopAt = std::chrono::steady_clock::now();
        session->requestStop();
        ASSERT_EQ(result.wait_for(1s), std::future_status::ready) << "stop after " << delay.count() << " ms hung";
        const auto took = std::chrono::steady_clock::now() - stopAt;
        EXPECT_LT(took, 1s);
        const Status s = result.get();
        ASSERT_FALSE(s.has_value()) << "a 400-step run finished before the stop";
        EXPECT_EQ(s.error().code, ErrorCode::Cancelled) << s.error().describe();
        EXPECT_LT(session->stepsDone(), 400);
        EXPECT_TRUE(session->finish().has_value()); // what was recorded is kept
    }
    // Nothing left running or locked: a fresh threaded run in the same process still trains.
    const Outcome again = train(tinyConfig("paci", 2, 2), ExecutorKind::Threaded);
    EXPECT_EQ(again.losses.size(), 2u);
}

// The last stage fails mid-schedule (its token source breaks on micro-batch 9 while the other
// stages are busy with later ones): the threaded drive must stop every stage, return within a
// second, and surface that error with its original message, as the serial drive does.
Error runWithBrokenLastStage(bool threaded)
{
    ModelOptions mo = test::tinyModelOptions(3, 4, WeightPolicy::Flush);
    TokenFn good = test::patternTokens(mo.shape, mo.microBatchSize);
    auto calls = std::make_shared<std::map<std::int64_t, int>>();
    auto mutex = std::make_shared<std::mutex>();
    // Stage 0 asks first (inputs); the last stage asks second (targets): only that call fails.
    TokenFn broken = [good, calls, mutex](std::int64_t mb) -> Result<TokenBatch> {
        int n = 0;
        {
            const std::lock_guard<std::mutex> lock(*mutex);
            n = ++(*calls)[mb];
        }
        if (mb == 9 && n == 2) {
            return makeError(ErrorCode::IoError, "token file vanished while reading targets", "micro-batch 9");
        }
        return good(mb);
    };
    auto model = PipelineModel::create(mo, broken);
    EXPECT_TRUE(model.has_value());
    model->setTargetsFromTokens(true);
    ScheduleParams params;
    params.name = "1f1b";
    params.stages = 3;
    params.microbatches = 4;
    params.batches = 6;
    auto schedule = makeSchedule(params);
    EXPECT_TRUE(schedule.has_value());
    TensorExecutor executor(*model);
    profiler::TraceStore store;
    const auto t0 = std::chrono::steady_clock::now();
    auto result = threaded ? driveThreaded(*schedule, executor, store) : drive(*schedule, executor, store);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
    EXPECT_FALSE(result.has_value());
    return result ? Error{} : result.error();
}

TEST(ThreadedExecutor, StageErrorStopsTheOthersWithTheOriginalMessage)
{
    const Error serial = runWithBrokenLastStage(false);
    const Error threaded = runWithBrokenLastStage(true);
    EXPECT_EQ(serial.code, ErrorCode::IoError) << serial.describe();
    EXPECT_EQ(threaded.code, ErrorCode::IoError) << threaded.describe();
    EXPECT_EQ(threaded.message, serial.message);
    EXPECT_EQ(threaded.message, "token file vanished while reading targets");
    EXPECT_NE(threaded.context.find("stage 2"), std::string::npos) << threaded.describe();
}

TEST(ThreadedExecutor, ChunkedRunsContinueTheTimelineAndRecordEveryBatch)
{
    RunConfig config = tinyConfig("1f1b", 2, 4);
    config.training.evalInterval = 2;
    config.training.evalBatches = 2;
    auto session = RunSession::create(config, threadedOptions());
    ASSERT_TRUE(session.has_value());
    ASSERT_TRUE(session->runSteps(2).has_value());
    const std::vector<BatchMetrics> first = session->pollMetrics();
    ASSERT_TRUE(session->runSteps(2).has_value());
    const std::vector<BatchMetrics> second = session->pollMetrics();
    ASSERT_EQ(first.size(), 2u);
    ASSERT_EQ(second.size(), 2u);
    EXPECT_EQ(first[0].step, 0);
    EXPECT_EQ(second[1].step, 3);
    EXPECT_LT(first[1].virtualTimeS, second[0].virtualTimeS);
    EXPECT_FALSE(first[0].valLoss.has_value()); // due inside the chunk: evaluated at its end
    EXPECT_TRUE(first[1].valLoss.has_value());
    EXPECT_TRUE(second[1].valLoss.has_value());
    EXPECT_TRUE(session->finish().has_value());
    EXPECT_EQ(session->summary().stages.size(), 2u);
}

} // namespace
} // namespace bs::runtime
