// Live Apply (RunSession::requestApply): a running run changes its schedule and batch geometry at
// the next global-batch boundary and continues from its current weights. Tiny GPT, 4 stages.
#include "profiler/io/chrome_trace.h"
#include "runtime/train/exec/run_session.h"
#include "tests/support/tiny_run_config.h"

#include <bubblescope/paci/lag_bound.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace bs::runtime {
namespace {

constexpr int kP = 4;

RunConfig tinyConfig(const std::string& schedule, int steps, int m = 4)
{
    return bs::test::tinyRunConfig(schedule, steps, kP, m);
}

/// What the GUI sends: a whole RunConfig (its tuning panel's), of which Apply takes the schedule
/// and the batch geometry.
RunConfig settings(const std::string& schedule, int m, int a, int b)
{
    RunConfig s = tinyConfig(schedule, 4, m);
    s.pipeline.accum = a;
    s.pipeline.microBatchSize = b;
    return s;
}

int stage0Forwards(const profiler::TraceSnapshot& trace)
{
    int n = 0;
    trace.forEach(
        [&](const profiler::TraceEvent& e) { n += e.stage == 0 && e.kind == profiler::EventKind::Forward ? 1 : 0; });
    return n;
}

/// Trains `session` for `steps` batches while another thread requests `apply` once stage 0 has
/// forwarded `afterForwards` micro-batches (what the GUI's Apply does mid-run).
Status trainAndApply(RunSession& session, int steps, const RunConfig& apply, int afterForwards, Status& applied)
{
    std::atomic<bool> done{false};
    std::thread requester([&] {
        while (!done.load()) {
            if (stage0Forwards(*session.trace()) >= afterForwards) {
                applied = session.requestApply(apply);
                return;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        applied = makeError(ErrorCode::Internal, "the run ended before the apply was requested");
    });
    const Status trained = session.runSteps(steps);
    done = true;
    requester.join();
    return trained;
}

TEST(LiveApply, ChangesSettingsAtABatchBoundaryAndContinuesFromTheWeights)
{
    constexpr int kSteps = 10, kOldM = 4, kNewM = 2;
    auto session = RunSession::create(tinyConfig("1f1b", kSteps, kOldM));
    ASSERT_TRUE(session.has_value()) << session.error().describe();
    Status applied = ok();
    const Status trained = trainAndApply(*session, kSteps, settings("paci", kNewM, 1, 3), 2 * kOldM, applied);
    ASSERT_TRUE(trained.has_value()) << trained.error().describe();
    ASSERT_TRUE(applied.has_value()) << applied.error().describe();
    EXPECT_EQ(session->stepsDone(), kSteps);

    const std::vector<AppliedChange> changes = session->appliedChanges();
    ASSERT_EQ(changes.size(), 1u);
    const AppliedChange& c = changes[0];
    EXPECT_GE(c.step, 2) << "the boundary follows the batch being started when Apply came";
    ASSERT_LT(c.step, kSteps) << "the change landed inside the run";
    EXPECT_EQ(c.firstMicrobatch, static_cast<std::int64_t>(c.step) * kOldM) << "a global-batch boundary";
    EXPECT_EQ(c.label, "apply: paci m=2 a=1 b=3");

    // The new settings are in force.
    const RunConfig& now = session->config();
    EXPECT_EQ(now.schedule.name, "paci");
    EXPECT_EQ(now.pipeline.microbatches, kNewM);
    EXPECT_EQ(now.pipeline.microBatchSize, 3);

    // Exactly at the boundary on the trace: everything before it ended by the marker, nothing
    // after it started earlier; micro-batch ids continue; later batches have m = 2.
    const auto trace = session->trace();
    int markers = 0;
    std::int64_t maxMb = -1;
    trace->forEach([&](const profiler::TraceEvent& e) {
        if (e.kind == profiler::EventKind::Marker) {
            ++markers;
            EXPECT_EQ(e.start, c.time);
            EXPECT_EQ(e.microbatch, c.step);
            return;
        }
        if (e.kind == profiler::EventKind::Update) {
            return;
        }
        if (e.microbatch < c.firstMicrobatch) {
            EXPECT_LE(e.end, c.time) << "micro-batch " << e.microbatch << " ran past the boundary";
        } else {
            EXPECT_GE(e.start, c.time) << "micro-batch " << e.microbatch << " started before the boundary";
        }
        maxMb = std::max<std::int64_t>(maxMb, e.microbatch);
    });
    EXPECT_EQ(markers, 1);
    EXPECT_EQ(maxMb + 1, c.firstMicrobatch + static_cast<std::int64_t>(kSteps - c.step) * kNewM);
    EXPECT_EQ(trace->meta().attributes.at("marker." + std::to_string(c.step)), c.label);

    // Continues from the trained weights: the first loss after the change is well below the start.
    const RunSummary summary = session->summary();
    ASSERT_EQ(summary.losses.size(), static_cast<std::size_t>(kSteps));
    const auto step = static_cast<std::size_t>(c.step);
    EXPECT_LT(summary.losses[step], summary.losses[0] - 0.05) << "not back to the initial loss";
    for (double l : summary.losses) {
        EXPECT_TRUE(std::isfinite(l));
    }
    // PACI with a = 1 after the change: each stage's max version lag is the new bound.
    ASSERT_EQ(summary.stages.size(), static_cast<std::size_t>(kP));
    for (int s = 0; s < kP; ++s) {
        EXPECT_EQ(summary.stages[static_cast<std::size_t>(s)].maxLag, paci::maxLag(kP, s, 1)) << "stage " << s;
    }
    ASSERT_TRUE(session->finish().has_value());
}

// Applying numerically equivalent settings mid-run must not change the losses: the weights, the
// AdamW state and the LR schedule continue, the boundary loses no gradient, and the data continues
// at the next unread sequence. 1f1b -> gpipe (both flush once per batch of the same m and b): bit
// for bit the same numerics. m=4 b=2 -> m=2 b=4: the same 8 sequences per global batch, in order,
// only split differently (equal up to float summation order).
void expectSameLosses(const RunConfig& apply, double tolerance)
{
    constexpr int kSteps = 6, kM = 4;
    auto plain = RunSession::create(tinyConfig("1f1b", kSteps, kM));
    ASSERT_TRUE(plain.has_value());
    ASSERT_TRUE(plain->runSteps(kSteps).has_value());
    const std::vector<double> expected = plain->summary().losses;

    auto session = RunSession::create(tinyConfig("1f1b", kSteps, kM));
    ASSERT_TRUE(session.has_value());
    Status applied = ok();
    const Status trained = trainAndApply(*session, kSteps, apply, kM + 1, applied);
    ASSERT_TRUE(trained.has_value()) << trained.error().describe();
    ASSERT_TRUE(applied.has_value()) << applied.error().describe();
    ASSERT_EQ(session->appliedChanges().size(), 1u);
    EXPECT_EQ(session->config().schedule.name, apply.schedule.name);
    EXPECT_EQ(session->config().pipeline.microBatchSize, apply.pipeline.microBatchSize);
    const std::vector<double> got = session->summary().losses;
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], expected[i], tolerance * std::abs(expected[i])) << "step " << i;
    }
}

TEST(LiveApply, EquivalentScheduleLeavesTheLossesUnchanged)
{
    expectSameLosses(settings("gpipe", 4, 0, 2), 1e-6);
}

TEST(LiveApply, SameGlobalBatchSplitDifferentlyLeavesTheLossesUnchanged)
{
    expectSameLosses(settings("1f1b", 2, 0, 4), 1e-4);
}

TEST(LiveApply, AsyncToSyncDrainsAtTheBoundary)
{
    constexpr int kSteps = 8, kM = 4;
    RunConfig config = tinyConfig("paci", kSteps, kM);
    config.pipeline.accum = 2;
    auto session = RunSession::create(config);
    ASSERT_TRUE(session.has_value()) << session.error().describe();
    Status applied = ok();
    const Status trained = trainAndApply(*session, kSteps, settings("1f1b", kM, 0, 2), kM + 1, applied);
    ASSERT_TRUE(trained.has_value()) << trained.error().describe();
    ASSERT_TRUE(applied.has_value()) << applied.error().describe();
    EXPECT_EQ(session->stepsDone(), kSteps);
    const auto changes = session->appliedChanges();
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_GE(changes[0].step, 2);
    EXPECT_EQ(changes[0].firstMicrobatch, changes[0].step * kM);
    // Every update before the boundary applied whole windows of a = 2; after it, m = 4.
    session->trace()->forEach([&](const profiler::TraceEvent& e) {
        if (e.kind == profiler::EventKind::Update) {
            EXPECT_EQ(e.aux, e.start < changes[0].time ? 2 : kM);
        }
    });
    const RunSummary summary = session->summary();
    ASSERT_EQ(summary.losses.size(), static_cast<std::size_t>(kSteps));
    EXPECT_LT(summary.losses.back(), summary.losses.front() - 0.05);
}

TEST(LiveApply, RequestedBetweenChunksAppliesAtTheNextRunStepsAndRewritesConfig)
{
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("bs_live_apply_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    SessionOptions options;
    options.outDir = dir;
    auto session = RunSession::create(tinyConfig("1f1b", 4), options);
    ASSERT_TRUE(session.has_value()) << session.error().describe();
    ASSERT_TRUE(session->runSteps(2).has_value());
    ASSERT_TRUE(session->requestApply(settings("gpipe", 2, 0, 2)).has_value());
    ASSERT_TRUE(session->runSteps(2).has_value());
    const auto changes = session->appliedChanges();
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].step, 2);
    EXPECT_EQ(changes[0].firstMicrobatch, 8);
    // The marker and its label survive the Chrome/Perfetto export and import.
    auto back = profiler::readChromeTrace(profiler::toChromeTraceJson(*session->trace()));
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    int markers = 0;
    for (const profiler::TraceEvent& e : back->events) {
        if (e.kind == profiler::EventKind::Marker) {
            ++markers;
            EXPECT_EQ(e.microbatch, 2);
            EXPECT_EQ(e.start, changes[0].time);
        }
    }
    EXPECT_EQ(markers, 1);
    EXPECT_EQ(back->meta.attributes["marker.2"], "apply: gpipe m=2 a=2 b=2");
    ASSERT_TRUE(session->finish().has_value());
    std::ifstream in(dir / "config.toml");
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("\"gpipe\""), std::string::npos) << "config.toml holds the settings in force";
    std::filesystem::remove_all(dir);
}

TEST(LiveApply, RejectsWhatCannotChangeAndInvalidSettingsNamingTheField)
{
    auto session = RunSession::create(tinyConfig("1f1b", 4));
    ASSERT_TRUE(session.has_value()) << session.error().describe();
    const auto rejected = [&](RunConfig s, const std::string& field) {
        const Status st = session->requestApply(s);
        ASSERT_FALSE(st.has_value()) << field;
        EXPECT_EQ(st.error().code, ErrorCode::InvalidArgument) << st.error().describe();
        EXPECT_NE(st.error().describe().find(field), std::string::npos) << st.error().describe();
    };
    RunConfig s = settings("paci", 4, 2, 2);
    s.pipeline.stages = kP + 1;
    rejected(s, "pipeline.stages");
    s = settings("paci", 4, 2, 2);
    s.model.preset = "small";
    rejected(s, "model.preset");
    s = settings("paci", 4, 2, 2);
    s.device.name = "cuda";
    rejected(s, "device.name");
    rejected(settings("paci", 4, 3, 2), "pipeline.accum"); // must divide m
    rejected(settings("1f1b", 4, 2, 2), "pipeline.accum"); // paci only
    rejected(settings("no-such-schedule", 4, 0, 2), "schedule.name");
    rejected(settings("1f1b", 0, 0, 2), "pipeline.microbatches");
    rejected(settings("1f1b", 4, 0, 0), "pipeline.micro_batch_size");
    // Matching fixed fields are fine, and the fields Apply does not take (here the length of the
    // run and the learning rate) are ignored: nothing was applied by the rejected requests.
    s = settings("paci", 4, 2, 2);
    s.training.steps = 1000;
    s.optimizer.lr = 1.0;
    EXPECT_TRUE(session->requestApply(s).has_value());
    EXPECT_TRUE(session->appliedChanges().empty());
}

TEST(LiveApply, ThreadedExecutorAndReferenceAreRejected)
{
    SessionOptions threaded;
    threaded.executor = ExecutorKind::Threaded;
    auto a = RunSession::create(tinyConfig("1f1b", 2), threaded);
    ASSERT_TRUE(a.has_value());
    const Status sa = a->requestApply(settings("gpipe", 4, 0, 2));
    ASSERT_FALSE(sa.has_value());
    EXPECT_EQ(sa.error().code, ErrorCode::Unavailable);
    SessionOptions reference;
    reference.reference = true;
    auto b = RunSession::create(tinyConfig("1f1b", 2), reference);
    ASSERT_TRUE(b.has_value());
    EXPECT_FALSE(b->requestApply(settings("gpipe", 4, 0, 2)).has_value());
}

TEST(LiveApply, ApplyAndStopTogetherReturnPromptly)
{
    auto session = RunSession::create(tinyConfig("paci", 200));
    ASSERT_TRUE(session.has_value());
    std::thread other([&] {
        while (stage0Forwards(*session->trace()) < 3) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        (void)session->requestApply(settings("1f1b", 2, 0, 2));
        session->requestStop();
    });
    const auto t0 = std::chrono::steady_clock::now();
    const Status s = session->runSteps(200);
    other.join();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.error().code, ErrorCode::Cancelled);
    EXPECT_LT(session->stepsDone(), 200);
    EXPECT_TRUE(session->finish().has_value());
}

} // namespace
} // namespace bs::runtime
