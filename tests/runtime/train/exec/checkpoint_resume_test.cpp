// Checkpoint and resume (RunSession with training.checkpoint_every, SessionOptions::resume): a run
// stopped or killed after a checkpoint and resumed trains exactly as the uninterrupted run
// (bit-identical losses on the serial executor), for each schedule family: synchronous (1f1b),
// PACI (in-place local accumulation) and stashing (pipedream); plus the stop request at a batch
// boundary, a live Apply before the checkpoint, and the errors of a bad resume.
#include "runtime/plan/rundir/checkpoint_state.h"
#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/train/exec/run_session.h"
#include "tests/support/tiny_run_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

namespace bs::runtime {
namespace {

namespace fs = std::filesystem;

fs::path freshDir(const std::string& name)
{
    const fs::path dir = fs::temp_directory_path() / ("bs_ckpt_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    return dir;
}

RunConfig config(const std::string& schedule, int steps, int checkpointEvery)
{
    RunConfig c = bs::test::tinyRunConfig(schedule, steps);
    if (schedule == "paci") {
        c.pipeline.accum = 2; // two local windows per batch: updates inside the batch, not only at its end
    }
    c.training.checkpointEvery = checkpointEvery;
    c.training.evalInterval = 2;
    c.profiling.trace = true;
    return c;
}

SessionOptions in(const fs::path& dir, bool resume = false)
{
    SessionOptions o;
    o.outDir = dir;
    o.resume = resume;
    return o;
}

std::vector<int> metricSteps(const fs::path& dir)
{
    auto run = readRunDir(dir);
    EXPECT_TRUE(run.has_value()) << run.error().describe();
    std::vector<int> steps;
    for (const auto& r : run ? run->metrics : std::vector<nlohmann::json>{}) {
        steps.push_back(r.at("step").get<int>());
    }
    return steps;
}

std::size_t traceEvents(const fs::path& dir)
{
    auto run = readRunDir(dir);
    if (!run) {
        return 0;
    }
    auto trace = readRunTrace(*run);
    return trace ? (*trace)->size() : 0;
}

class ResumeIsBitIdentical : public ::testing::TestWithParam<std::string>
{};

TEST_P(ResumeIsBitIdentical, KilledAfterACheckpointThenResumed)
{
    const std::string schedule = GetParam();
    const fs::path whole = freshDir(schedule + "_whole");
    const fs::path cut = freshDir(schedule + "_cut");
    auto uninterrupted = RunSession::create(config(schedule, 6, 2), in(whole));
    ASSERT_TRUE(uninterrupted.has_value()) << uninterrupted.error().describe();
    ASSERT_TRUE(uninterrupted->run().has_value());
    const RunSummary expected = uninterrupted->summary();
    {
        // Killed: three batches trained, the checkpoint at 2, no finish() (nothing more written).
        auto first = RunSession::create(config(schedule, 6, 2), in(cut));
        ASSERT_TRUE(first.has_value()) << first.error().describe();
        ASSERT_TRUE(first->runSteps(3).has_value());
    }
    EXPECT_EQ(metricSteps(cut), (std::vector<int>{0, 1, 2}));
    auto resumed = RunSession::create(config(schedule, 6, 2), in(cut, true));
    ASSERT_TRUE(resumed.has_value()) << resumed.error().describe();
    EXPECT_EQ(resumed->stepsDone(), 2);
    EXPECT_EQ(metricSteps(cut), (std::vector<int>{0, 1})) << "the batch after the checkpoint is trained again";
    ASSERT_TRUE(resumed->run().has_value());
    const RunSummary got = resumed->summary();
    ASSERT_EQ(got.losses.size(), 6u);
    EXPECT_EQ(got.losses, expected.losses) << schedule; // exact: same numbers, not merely close
    EXPECT_EQ(got.valLosses, expected.valLosses);
    EXPECT_EQ(got.valSteps, expected.valSteps);
    ASSERT_EQ(got.stages.size(), expected.stages.size());
    for (std::size_t s = 0; s < got.stages.size(); ++s) {
        EXPECT_EQ(got.stages[s].version, expected.stages[s].version);
        EXPECT_EQ(got.stages[s].lagHistogram, expected.stages[s].lagHistogram) << "stage " << s;
        EXPECT_EQ(got.stages[s].driftSamples, expected.stages[s].driftSamples) << "stage " << s;
    }
    EXPECT_EQ(metricSteps(cut), (std::vector<int>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(traceEvents(cut), traceEvents(whole)) << "the trace continues: every action once";
    auto state = readCheckpointState(cut / kCheckpointDirName);
    ASSERT_TRUE(state.has_value()) << state.error().describe();
    EXPECT_EQ(state->step, 6);
    EXPECT_FALSE(fs::exists(cut / kCheckpointDirName / stageCheckpointFileName(0, 2))) << "older archives are removed";
    EXPECT_TRUE(fs::exists(cut / kCheckpointDirName / stageCheckpointFileName(3, 6)));
    fs::remove_all(whole);
    fs::remove_all(cut);
}

INSTANTIATE_TEST_SUITE_P(Families, ResumeIsBitIdentical, ::testing::Values("1f1b", "paci", "pipedream"));

TEST(Checkpoint, ThreadedExecutorResumesToTheSameLosses)
{
    // One thread per stage: periodic checkpoints (a stop there is immediate, not at a boundary).
    const fs::path whole = freshDir("threaded_whole");
    const fs::path cut = freshDir("threaded_cut");
    SessionOptions threadedWhole = in(whole);
    threadedWhole.executor = ExecutorKind::Threaded;
    auto uninterrupted = RunSession::create(config("paci", 4, 2), threadedWhole);
    ASSERT_TRUE(uninterrupted.has_value()) << uninterrupted.error().describe();
    ASSERT_TRUE(uninterrupted->run().has_value());
    {
        SessionOptions o = in(cut);
        o.executor = ExecutorKind::Threaded;
        auto first = RunSession::create(config("paci", 4, 2), o);
        ASSERT_TRUE(first.has_value());
        ASSERT_TRUE(first->runSteps(2).has_value());
    }
    SessionOptions o = in(cut, true);
    o.executor = ExecutorKind::Threaded;
    auto resumed = RunSession::create(config("paci", 4, 2), o);
    ASSERT_TRUE(resumed.has_value()) << resumed.error().describe();
    ASSERT_TRUE(resumed->run().has_value());
    EXPECT_EQ(resumed->summary().losses, uninterrupted->summary().losses);
    fs::remove_all(whole);
    fs::remove_all(cut);
}

TEST(Checkpoint, SynchronousSchedulesTrainTheSameWithAndWithoutCheckpoints)
{
    const fs::path dir = freshDir("sync_same");
    auto with = RunSession::create(config("gpipe", 5, 2), in(dir));
    auto without = RunSession::create(config("gpipe", 5, 0), {});
    ASSERT_TRUE(with.has_value() && without.has_value());
    ASSERT_TRUE(with->run().has_value());
    ASSERT_TRUE(without->run().has_value());
    EXPECT_EQ(with->summary().losses, without->summary().losses)
        << "a flush schedule is at rest at every batch boundary";
    fs::remove_all(dir);
}

TEST(Checkpoint, StopRequestEndsTheBatchInProgressAndCheckpoints)
{
    const fs::path dir = freshDir("stop");
    const int steps = 12;
    RunConfig c = config("paci", steps, 100); // no periodic checkpoint before the stop
    auto session = RunSession::create(c, in(dir));
    ASSERT_TRUE(session.has_value()) << session.error().describe();
    // GUI Stop / SIGINT while batches run: asked from another thread once the first batch is in.
    std::thread stopper([&] {
        while (session->pollMetrics().empty()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        session->requestStop();
    });
    const Status stopped = session->runSteps(steps);
    stopper.join();
    ASSERT_FALSE(stopped.has_value()) << "the stop came after the last batch";
    EXPECT_EQ(stopped.error().code, ErrorCode::Cancelled);
    const int k = session->stepsDone();
    EXPECT_GE(k, 1);
    EXPECT_TRUE(session->finish().has_value());
    auto state = readCheckpointState(dir / kCheckpointDirName);
    ASSERT_TRUE(state.has_value()) << state.error().describe();
    EXPECT_EQ(state->step, k) << "the checkpoint is at the batch boundary where the run stopped";
    EXPECT_EQ(metricSteps(dir).size(), static_cast<std::size_t>(k));

    auto resumed = RunSession::create(c, in(dir, true));
    ASSERT_TRUE(resumed.has_value()) << resumed.error().describe();
    ASSERT_TRUE(resumed->run().has_value());
    // The same training as one session that drains after batch k (PACI drains where it stopped).
    auto reference = RunSession::create(c, {});
    ASSERT_TRUE(reference.has_value());
    ASSERT_TRUE(reference->runSteps(k).has_value());
    ASSERT_TRUE(reference->runSteps(steps - k).has_value());
    EXPECT_EQ(resumed->summary().losses, reference->summary().losses) << "stopped after batch " << k;
    EXPECT_TRUE(readRunDir(dir)->summary.has_value()) << "the resumed run ended normally";
    fs::remove_all(dir);
}

TEST(Checkpoint, LiveApplyBeforeTheCheckpointIsResumedWithItsSettingsDataAndLr)
{
    RunConfig apply = config("1f1b", 6, 2);
    apply.schedule.name = "paci";
    apply.pipeline.microbatches = 2;
    apply.pipeline.accum = 1;
    apply.pipeline.microBatchSize = 3; // the data cursor moves off the b = 2 grid
    const fs::path whole = freshDir("apply_whole");
    const fs::path cut = freshDir("apply_cut");
    auto one = RunSession::create(config("1f1b", 6, 2), in(whole));
    ASSERT_TRUE(one.has_value());
    ASSERT_TRUE(one->runSteps(1).has_value());
    ASSERT_TRUE(one->requestApply(apply).has_value());
    ASSERT_TRUE(one->runSteps(5).has_value());
    {
        auto first = RunSession::create(config("1f1b", 6, 2), in(cut));
        ASSERT_TRUE(first.has_value());
        ASSERT_TRUE(first->runSteps(1).has_value());
        ASSERT_TRUE(first->requestApply(apply).has_value());
        ASSERT_TRUE(first->runSteps(3).has_value()); // checkpoints at 2 and 4
    }
    auto state = readCheckpointState(cut / kCheckpointDirName);
    ASSERT_TRUE(state.has_value()) << state.error().describe();
    EXPECT_EQ(state->step, 4);
    EXPECT_EQ(state->config.schedule.name, "paci");
    ASSERT_EQ(state->changes.size(), 1u);
    auto resumed = RunSession::create(state->config, in(cut, true));
    ASSERT_TRUE(resumed.has_value()) << resumed.error().describe();
    ASSERT_TRUE(resumed->runSteps(2).has_value());
    EXPECT_EQ(resumed->summary().losses, one->summary().losses);
    EXPECT_EQ(resumed->appliedChanges().size(), 1u);
    fs::remove_all(whole);
    fs::remove_all(cut);
}

TEST(Checkpoint, BadResumesAreRefusedWithTheirReason)
{
    const fs::path dir = freshDir("bad");
    auto none = RunSession::create(config("1f1b", 4, 2), in(dir, true));
    ASSERT_FALSE(none.has_value());
    EXPECT_NE(none.error().message.find("no checkpoint"), std::string::npos) << none.error().describe();
    {
        auto first = RunSession::create(config("1f1b", 4, 2), in(dir));
        ASSERT_TRUE(first.has_value());
        ASSERT_TRUE(first->runSteps(2).has_value());
    }
    auto other = RunSession::create(config("gpipe", 4, 2), in(dir, true));
    ASSERT_FALSE(other.has_value());
    EXPECT_EQ(other.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(other.error().context, "schedule");
    auto shorter = RunSession::create(config("1f1b", 1, 2), in(dir, true));
    ASSERT_FALSE(shorter.has_value());
    EXPECT_EQ(shorter.error().context, "training.steps");

    // A damaged archive names its file.
    const fs::path archive = dir / kCheckpointDirName / stageCheckpointFileName(1, 2);
    std::ofstream(archive, std::ios::trunc) << "not a torch archive";
    auto damaged = RunSession::create(config("1f1b", 4, 2), in(dir, true));
    ASSERT_FALSE(damaged.has_value());
    EXPECT_EQ(damaged.error().code, ErrorCode::ParseError);
    EXPECT_NE(damaged.error().context.find("stage1-step2.pt"), std::string::npos) << damaged.error().describe();
    fs::remove_all(dir);
}

TEST(CheckpointState, RoundTripsAndNamesTheBadField)
{
    const fs::path dir = freshDir("state");
    CheckpointState s;
    s.step = 3;
    s.microbatchesDone = 12;
    s.cursorBatchSize = 2;
    s.virtualTime = 123456789;
    s.config = bs::test::tinyRunConfig("paci", 8);
    s.initialConfig = bs::test::tinyRunConfig("1f1b", 8);
    s.versions = {3, 3, 3, 3};
    s.losses = {4.1, std::nan(""), 3.9};
    s.changes.push_back({1, 4, 1000, "apply: paci m=4 a=4 b=2", bs::test::tinyRunConfig("paci", 8)});
    s.timeToTargetS = 1.5;
    ASSERT_TRUE(writeCheckpointState(dir, s).has_value());
    auto back = readCheckpointState(dir);
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    EXPECT_TRUE(std::isnan(back->losses[1]));
    back->losses[1] = s.losses[1] = 0.0; // NaN != NaN
    EXPECT_EQ(*back, s);

    const auto field = [](const std::string& text) {
        auto r = parseCheckpointState(text, "state.json");
        return r ? std::string("parsed") : r.error().context;
    };
    EXPECT_EQ(field("[]"), "state.json");
    EXPECT_EQ(field(R"({"format": 1})"), "state.json: step");
    EXPECT_EQ(field(R"({"format": 2})"), "state.json: format");
    EXPECT_EQ(field(R"({"format": 1, "step": -1})"), "state.json: step");
    EXPECT_EQ(field(R"({"format": 1, "step": "3"})"), "state.json: step");
    fs::remove_all(dir);
}

} // namespace
} // namespace bs::runtime
