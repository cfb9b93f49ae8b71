// The training runtime end to end: schedules from the catalogue, driven by the scheduler core with
// the TensorExecutor, against the plain reference trainer. Tiny GPT (4 layers, d 32, seq 16, b 2).
#include "runtime/train/exec/run_session.h"

#include "runtime/plan/schedule/catalogue.h"
#include "tests/support/tiny_run_config.h"
#include "tests/support/train_run.h"

#include <bubblescope/paci/lag_bound.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

namespace bs::runtime {
namespace {

RunConfig tinyConfig(const std::string& schedule, int steps, int stages = 4, int m = 4)
{
    return bs::test::tinyRunConfig(schedule, steps, stages, m);
}

std::vector<double> losses(const RunConfig& config, bool reference = false)
{
    SessionOptions o;
    o.reference = reference;
    return bs::test::trainRun(config, o).summary.losses;
}

class SyncMatchesReference : public ::testing::TestWithParam<std::string>
{};

TEST_P(SyncMatchesReference, LossesEqualStepByStep)
{
    const RunConfig config = tinyConfig(GetParam(), 4);
    const std::vector<double> ref = losses(config, true);
    const std::vector<double> pipe = losses(config);
    ASSERT_EQ(ref.size(), 4u);
    ASSERT_EQ(pipe.size(), 4u);
    for (std::size_t i = 0; i < ref.size(); ++i) {
        EXPECT_LE(std::abs(pipe[i] - ref[i]) / std::abs(ref[i]), 1e-5) << GetParam() << " step " << i;
    }
    EXPECT_LT(ref.back(), ref.front()) << "the model learns";
}

INSTANTIATE_TEST_SUITE_P(Schedules, SyncMatchesReference, ::testing::Values("1f1b", "gpipe", "zb-h1", "zb-h2"),
    [](const ::testing::TestParamInfo<std::string>& param) {
        std::string n = param.param;
        std::replace(n.begin(), n.end(), '-', '_');
        return n;
    });

// Where PACI must agree with synchronous training: one stage never has a backward pending across
// an update, so its local accumulation is plain gradient accumulation.
TEST(RunSession, PaciOnOneStageEqualsTheReference)
{
    const RunConfig config = tinyConfig("paci", 4, 1, 4);
    const std::vector<double> ref = losses(config, true);
    const std::vector<double> paci = losses(config);
    ASSERT_EQ(paci.size(), ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) {
        EXPECT_LE(std::abs(paci[i] - ref[i]) / std::abs(ref[i]), 1e-5) << "step " << i;
    }
}

TEST(RunSession, SameSeedGivesIdenticalLossesAndValidation)
{
    RunConfig config = tinyConfig("paci", 4);
    config.training.evalInterval = 1;
    config.training.evalBatches = 2;
    auto run = [](const RunConfig& c) {
        auto session = RunSession::create(c);
        EXPECT_TRUE(session.has_value());
        EXPECT_TRUE(session->run().has_value());
        return session->summary();
    };
    const RunSummary a = run(config);
    config.device.intraOpThreads = 1; // different timings, same static per-stage orders
    const RunSummary b = run(config);
    ASSERT_EQ(a.losses.size(), 4u);
    ASSERT_EQ(a.valLosses.size(), 4u);
#if BS_TEST_BLAS_SPLITS_BY_THREADS
    // MKL's GEMM sums in thread-count-dependent order: the same run within rounding, and the same
    // thread count bit for bit.
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_NEAR(a.losses[i], b.losses[i], 1e-5 * std::abs(a.losses[i])) << "step " << i;
        EXPECT_NEAR(a.valLosses[i], b.valLosses[i], 1e-5 * std::abs(a.valLosses[i]))
            << "validation runs at a timing-independent point";
    }
    const RunSummary c = run(config);
    EXPECT_EQ(b.losses, c.losses);
    EXPECT_EQ(b.valLosses, c.valLosses);
#else
    EXPECT_EQ(a.losses, b.losses);
    EXPECT_EQ(a.valLosses, b.valLosses) << "validation runs at a timing-independent point";
#endif
}

struct RunResult
{
    RunSummary summary;
};

RunSummary runSummary(const RunConfig& config)
{
    auto session = RunSession::create(config);
    EXPECT_TRUE(session.has_value()) << session.error().describe();
    const Status s = session->run();
    EXPECT_TRUE(s.has_value()) << s.error().describe();
    return session->summary();
}

// The warm-up before compared runs is a throwaway: it must not change what a run then computes.
TEST(RunSession, WarmUpLeavesTheNextRunUnchangedAndRejectsABadConfig)
{
    const RunConfig config = tinyConfig("1f1b", 2);
    const RunSummary before = runSummary(config);
    ASSERT_TRUE(RunSession::warmUp(config).has_value());
    const RunSummary after = runSummary(config);
    EXPECT_EQ(before.losses, after.losses);
    RunConfig bad = config;
    bad.pipeline.stages = 0;
    const Status refused = RunSession::warmUp(bad);
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, ErrorCode::InvalidArgument);
}

TEST(RunSession, PaciLagEqualsTheBoundAndLossesDecrease)
{
    constexpr int kP = 4, kM = 4;
    const RunSummary paci = runSummary(tinyConfig("paci", 8, kP, kM));
    ASSERT_EQ(paci.stages.size(), static_cast<std::size_t>(kP));
    for (int s = 0; s < kP; ++s) {
        const StageMetrics& st = paci.stages[static_cast<std::size_t>(s)];
        EXPECT_EQ(st.maxLag, paciLagBound(kP, s, kM, 0)) << "stage " << s;
        EXPECT_EQ(st.maxLag, paci::maxLag(kP, s, kM, 0)) << "stage " << s;
        EXPECT_EQ(st.version, 8 * kM / kM) << "one update per a backward passes";
    }
    ASSERT_EQ(paci.losses.size(), 8u);
    for (double l : paci.losses) {
        EXPECT_TRUE(std::isfinite(l));
    }
    EXPECT_LT(paci.losses.back(), paci.losses.front() - 0.05);
}

TEST(RunSession, PaciMemoryMatches1f1bAndPipedreamHoldsMore)
{
    constexpr int kP = 4, kM = 4;
    const RunSummary oneF = runSummary(tinyConfig("1f1b", 3, kP, kM));
    const RunSummary paci = runSummary(tinyConfig("paci", 3, kP, kM));
    const RunSummary pipedream = runSummary(tinyConfig("pipedream", 3, kP, kM));
    for (int s = 0; s < kP; ++s) {
        const auto i = static_cast<std::size_t>(s);
        const double ref = static_cast<double>(oneF.stages[i].peakBytes);
        EXPECT_NEAR(static_cast<double>(paci.stages[i].peakBytes), ref, 0.02 * ref) << "stage " << s;
        EXPECT_EQ(paci.stages[i].peakStashBytes, 0);
    }
    EXPECT_GT(pipedream.stages[0].peakStashBytes, 0);
    EXPECT_GT(static_cast<double>(pipedream.stages[0].peakBytes), 1.05 * static_cast<double>(oneF.stages[0].peakBytes));
}

TEST(RunSession, StopRequestReturnsWithinASecondAndKeepsTheRunDirectory)
{
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("bs_run_session_stop_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    RunConfig config = tinyConfig("paci", 5000);
    config.profiling.trace = true;
    SessionOptions o;
    o.outDir = dir;
    auto session = RunSession::create(config, o);
    ASSERT_TRUE(session.has_value()) << session.error().describe();
    Status result = ok();
    std::thread worker([&] { result = session->runSteps(5000); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto t0 = std::chrono::steady_clock::now();
    session->requestStop();
    worker.join();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code, ErrorCode::Cancelled);
    ASSERT_TRUE(session->finish().has_value());
    EXPECT_TRUE(std::filesystem::exists(dir / "config.toml"));
    EXPECT_TRUE(std::filesystem::exists(dir / "metrics.jsonl"));
    EXPECT_TRUE(std::filesystem::exists(dir / "trace.json"));
    EXPECT_TRUE(std::filesystem::exists(dir / "summary.json"));
    EXPECT_FALSE(session->runSteps(1).has_value()) << "a stopped session does not continue";
    std::filesystem::remove_all(dir);
}

TEST(RunSession, ReportsMetricsPerGlobalBatchWithValidation)
{
    RunConfig config = tinyConfig("1f1b", 4);
    config.training.evalInterval = 2;
    config.training.evalBatches = 2;
    auto session = RunSession::create(config);
    ASSERT_TRUE(session.has_value()) << session.error().describe();
    ASSERT_TRUE(session->runSteps(2).has_value());
    std::vector<BatchMetrics> first = session->pollMetrics();
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[1].step, 1);
    EXPECT_TRUE(first[1].valLoss.has_value());
    EXPECT_FALSE(first[0].valLoss.has_value());
    EXPECT_GT(first[1].virtualTimeS, first[0].virtualTimeS);
    EXPECT_GT(first[1].tokensPerSVirtual, 0.0);
    ASSERT_EQ(first[1].stages.size(), 4u);
    EXPECT_GT(first[1].stages[0].peakBytes, first[1].stages[0].paramBytes);
    ASSERT_TRUE(session->runSteps(2).has_value()) << "a run continues in chunks";
    EXPECT_EQ(session->pollMetrics().size(), 2u);
    EXPECT_TRUE(session->pollMetrics().empty());
    ASSERT_TRUE(session->finish().has_value());
    const RunSummary s = session->summary();
    EXPECT_EQ(s.steps, 4);
    EXPECT_GT(s.bubbleFraction, 0.0);
    EXPECT_LT(s.bubbleFraction, 1.0);
}

// stepsDone() is read by the GUI thread while the training thread advances it (it was a plain int:
// a data race; TSan builds have no torch, so this test states the contract: reads from another
// thread are safe and never go backwards).
TEST(RunSession, StepsDoneMayBeReadWhileTraining)
{
    auto session = RunSession::create(tinyConfig("paci", 6));
    ASSERT_TRUE(session.has_value()) << session.error().describe();
    std::atomic<bool> done{false};
    int seen = 0;
    bool monotonic = true;
    std::thread reader([&] {
        while (!done) {
            const int now = session->stepsDone();
            monotonic = monotonic && now >= seen;
            seen = now;
            std::this_thread::yield();
        }
    });
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(session->runSteps(2).has_value());
    }
    done = true;
    reader.join();
    EXPECT_TRUE(monotonic);
    EXPECT_EQ(session->stepsDone(), 6);
    // The summary's bubble fraction is analyze()'s of the run's trace.
    ASSERT_TRUE(session->finish().has_value());
    EXPECT_GT(session->summary().bubbleFraction, 0.0);
}

} // namespace
} // namespace bs::runtime
