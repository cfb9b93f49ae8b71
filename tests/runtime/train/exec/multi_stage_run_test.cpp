// Real training under the schedules that put several stages on each rank (interleaved and V
// placements): the model holds p · v chunks, the serial and threaded executors run the per-rank
// programs, and the synchronous schedules train exactly like the plain reference trainer.
// Tiny GPT (4 layers, d 32, seq 16, b 2) on p = 2 ranks with v = 2 chunks each.
#include "profiler/analysis/analyze.h"
#include "profiler/trace/trace_store.h"
#include "runtime/plan/common/stage_drift.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/simulator.h"
#include "runtime/train/exec/run_session.h"
#include "tests/support/tiny_run_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace bs::runtime {
namespace {

constexpr int kRanks = 2;
constexpr int kChunks = 2; // v

RunConfig multiStageConfig(const std::string& schedule, int steps = 4)
{
    RunConfig c = bs::test::tinyRunConfig(schedule, steps, kRanks, 4); // m = 4: a multiple of p, and >= 2p
    c.pipeline.stagesPerRank = kChunks;
    return c;
}

struct Ran
{
    std::vector<double> losses;
    RunSummary summary;
    std::shared_ptr<const profiler::TraceSnapshot> trace;
};

Ran train(const RunConfig& config, bool reference, ExecutorKind executor = ExecutorKind::Serial)
{
    SessionOptions o;
    o.reference = reference;
    o.executor = executor;
    auto session = RunSession::create(config, o);
    EXPECT_TRUE(session.has_value()) << session.error().describe();
    if (!session) {
        return {};
    }
    const Status s = session->run();
    EXPECT_TRUE(s.has_value()) << s.error().describe();
    return {session->summary().losses, session->summary(), session->trace()};
}

void expectEqualLosses(const std::vector<double>& pipe, const std::vector<double>& ref, const std::string& what)
{
    ASSERT_EQ(ref.size(), 4u) << what;
    ASSERT_EQ(pipe.size(), ref.size()) << what;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        EXPECT_LE(std::abs(pipe[i] - ref[i]) / std::abs(ref[i]), 1e-5) << what << " step " << i;
    }
    EXPECT_LT(ref.back(), ref.front()) << "the model learns";
}

class MultiStageMatchesReference : public ::testing::TestWithParam<std::string>
{};

TEST_P(MultiStageMatchesReference, SerialExecutor)
{
    const RunConfig config = multiStageConfig(GetParam());
    expectEqualLosses(train(config, false).losses, train(config, true).losses, GetParam() + " serial");
}

TEST_P(MultiStageMatchesReference, ThreadedExecutor)
{
    const RunConfig config = multiStageConfig(GetParam());
    expectEqualLosses(
        train(config, false, ExecutorKind::Threaded).losses, train(config, true).losses, GetParam() + " threaded");
}

INSTANTIATE_TEST_SUITE_P(Schedules, MultiStageMatchesReference,
    ::testing::Values("interleaved-1f1b", "looped-bfs", "interleaved-zb", "zb-v", "dualpipev"),
    [](const ::testing::TestParamInfo<std::string>& param) {
        std::string n = param.param;
        std::replace(n.begin(), n.end(), '-', '_');
        return n;
    });

// One lane per rank; each compute event names its chunk (aux), and every rank ran both chunks.
// DualPipeV's overlapped pairs are drawn as their forward half then their backward half.
TEST(MultiStageRun, TraceHasOneLanePerRankAndTellsTheChunksApart)
{
    for (const std::string name : {"interleaved-1f1b", "zb-v", "dualpipev"}) {
        for (ExecutorKind executor : {ExecutorKind::Serial, ExecutorKind::Threaded}) {
            RunConfig config = multiStageConfig(name, 2);
            config.profiling.trace = true;
            const Ran ran = train(config, false, executor);
            ASSERT_TRUE(ran.trace) << name;
            std::set<std::pair<int, int>> seen; // (rank, chunk) of forwards
            int forwards = 0;
            for (const profiler::TraceEvent& e : ran.trace->toVector()) {
                if (e.lane != profiler::Lane::Compute || e.kind != profiler::EventKind::Forward) {
                    continue;
                }
                EXPECT_LT(e.stage, kRanks) << name;
                EXPECT_LT(e.aux, kChunks) << name;
                seen.insert({e.stage, e.aux});
                ++forwards;
            }
            EXPECT_EQ(seen.size(), static_cast<std::size_t>(kRanks * kChunks)) << name;
            EXPECT_EQ(forwards, 2 * 4 * kRanks * kChunks) << name << ": every chunk forwards every micro-batch";
        }
    }
}

// Memory per rank counts all its chunks: both chunks' weights, gradients and AdamW state are live
// together for the whole run, so a rank's peak is at least their sum (one chunk's would be half).
TEST(MultiStageRun, MemoryPerRankCountsEveryChunk)
{
    for (const std::string name : {"interleaved-1f1b", "dualpipev"}) {
        const Ran ran = train(multiStageConfig(name, 2), false);
        ASSERT_EQ(ran.summary.stages.size(), static_cast<std::size_t>(kRanks * kChunks)) << name;
        ASSERT_EQ(ran.summary.ranks.size(), static_cast<std::size_t>(kRanks)) << name;
        for (const RankMemory& rank : ran.summary.ranks) {
            ASSERT_EQ(rank.stages.size(), static_cast<std::size_t>(kChunks)) << name;
            std::int64_t staticBytes = 0;
            std::int64_t sumOfPeaks = 0;
            std::int64_t largestPeak = 0;
            for (int s : rank.stages) {
                const StageMetrics& st = ran.summary.stages[static_cast<std::size_t>(s)];
                staticBytes += st.paramBytes + st.gradBytes + st.optimizerBytes;
                sumOfPeaks += st.peakBytes;
                largestPeak = std::max(largestPeak, st.peakBytes);
            }
            EXPECT_GE(rank.peakBytes, staticBytes) << name << " rank " << rank.rank;
            EXPECT_GT(rank.peakBytes, largestPeak) << name << " rank " << rank.rank;
            EXPECT_LE(rank.peakBytes, sumOfPeaks) << name << " rank " << rank.rank;
        }
    }
}

// The V placement puts stage 0 and the last stage on rank 0: rank 0 holds stages {0, 3}.
TEST(MultiStageRun, VPlacementPutsTheLastStageOnRankZero)
{
    const Ran ran = train(multiStageConfig("zb-v", 1), false);
    ASSERT_EQ(ran.summary.ranks.size(), 2u);
    EXPECT_EQ(ran.summary.ranks[0].stages, (std::vector<int>{0, 3}));
    EXPECT_EQ(ran.summary.ranks[1].stages, (std::vector<int>{1, 2}));
}

// PACI on an interleaved placement with real tensors: every model stage's measured version lag
// (updates its weights took between a micro-batch's forward and its backward) stays within the
// catalogue's bound for that chunk and chunk 0 reaches it; the serial and threaded executors give
// the same losses (static per-rank orders).
TEST(MultiStageRun, PaciInterleavedLagIsWithinItsBoundPerChunk)
{
    for (int a : {1, 2}) {
        RunConfig config = multiStageConfig("paci-interleaved", 6);
        config.pipeline.accum = a;
        const Ran serial = train(config, false);
        const Ran threaded = train(config, false, ExecutorKind::Threaded);
        ASSERT_EQ(serial.losses.size(), 6u);
        // Same static per-rank orders, so the same arithmetic up to LibTorch's own kernel choices:
        // 2.11's CPU kernels may reduce in another order on another thread (the last bits differ
        // there, never with 1.13). A different update order would move the losses by ~1e-3.
        ASSERT_EQ(threaded.losses.size(), serial.losses.size()) << "a = " << a;
        for (std::size_t i = 0; i < serial.losses.size(); ++i) {
            EXPECT_NEAR(threaded.losses[i], serial.losses[i], 1e-6) << "a = " << a << ", batch " << i;
        }
        for (double loss : serial.losses) {
            EXPECT_TRUE(std::isfinite(loss)) << "a = " << a;
        }
        ScheduleParams params = toScheduleParams(config);
        const std::vector<int> bounds = lagBounds(params);
        ASSERT_EQ(bounds.size(), static_cast<std::size_t>(kRanks * kChunks));
        ASSERT_EQ(serial.summary.stages.size(), bounds.size());
        bool reached = false;
        for (std::size_t s = 0; s < bounds.size(); ++s) {
            const int lag = serial.summary.stages[s].maxLag;
            EXPECT_LE(lag, bounds[s]) << "a = " << a << " stage " << s;
            reached = reached || (bounds[s] > 0 && lag == bounds[s]);
        }
        EXPECT_TRUE(reached) << "a = " << a << ": some chunk's lag reaches its bound";
        EXPECT_EQ(serial.summary.stages[0].maxLag, bounds[0]) << "a = " << a << ": the first chunk waits longest";
    }
}

// Weight drift is measured per model stage (chunk), never mixed over a rank's chunks: every chunk
// of paci-interleaved records its own samples, with drift where its bound lets updates in (every
// stage but the last, whose bound is 0) and none on the last; interleaved 1F1B's forward and
// backward see the same weights (updates only at the flush), so every chunk's drift is exactly 0;
// one-stage-per-rank PACI on the same ranks drifts too. runDrift() names each stage's rank and chunk.
TEST(MultiStageRun, DriftIsMeasuredPerChunk)
{
    const int stages = kRanks * kChunks;
    RunConfig asyncConfig = multiStageConfig("paci-interleaved", 4);
    asyncConfig.pipeline.accum = 1;
    const Ran async = train(asyncConfig, false);
    ASSERT_EQ(async.summary.stages.size(), static_cast<std::size_t>(stages));
    const std::vector<int> bounds = lagBounds(toScheduleParams(asyncConfig));
    for (int s = 0; s < stages; ++s) {
        const StageMetrics& st = async.summary.stages[static_cast<std::size_t>(s)];
        EXPECT_GT(st.driftSamples, 0) << "paci-interleaved stage " << s;
        if (bounds[static_cast<std::size_t>(s)] > 0) {
            EXPECT_GT(st.maxDrift, 0.0) << "paci-interleaved stage " << s;
            EXPECT_GT(st.meanDrift, 0.0) << "paci-interleaved stage " << s;
        } else {
            EXPECT_EQ(st.maxDrift, 0.0) << "paci-interleaved stage " << s << " crosses no update";
        }
    }
    auto schedule = makeSchedule(toScheduleParams(asyncConfig));
    ASSERT_TRUE(schedule) << schedule.error().describe();
    const RunDrift drift = runDrift(async.summary.stages, schedule->rankOfStage);
    for (int s = 0; s < stages; ++s) {
        EXPECT_EQ(drift.stages[static_cast<std::size_t>(s)].rank, s % kRanks) << "stage " << s;
        EXPECT_EQ(drift.stages[static_cast<std::size_t>(s)].chunk, s / kRanks) << "stage " << s;
    }
    EXPECT_TRUE(drift.measured());
    EXPECT_GT(drift.meanDrift, 0.0);

    const Ran sync = train(multiStageConfig("interleaved-1f1b", 4), false);
    ASSERT_EQ(sync.summary.stages.size(), static_cast<std::size_t>(stages));
    for (const StageMetrics& st : sync.summary.stages) {
        EXPECT_GT(st.driftSamples, 0) << "interleaved-1f1b stage " << st.stage;
        EXPECT_EQ(st.maxDrift, 0.0) << "interleaved-1f1b stage " << st.stage << ": F and B see the same weights";
        EXPECT_EQ(st.maxLag, 0) << "interleaved-1f1b stage " << st.stage;
    }

    RunConfig paci = bs::test::tinyRunConfig("paci", 4, kRanks, 4);
    paci.pipeline.accum = 1;
    const Ran onePerRank = train(paci, false);
    ASSERT_EQ(onePerRank.summary.stages.size(), static_cast<std::size_t>(kRanks));
    EXPECT_GT(onePerRank.summary.stages[0].maxDrift, 0.0) << "paci stage 0";
}

// A real interleaved run's trace says it has v chunks per rank, as a simulated one does, so the
// analysis keeps one slot per (micro-batch, chunk): its lag per rank is the most of its chunks'
// measured lags. Without the attribute the two chunks' forwards shared a slot and the rank's lag
// came out wrong.
TEST(MultiStageRun, RealTraceTellsTheAnalysisItsChunks)
{
    RunConfig config = multiStageConfig("paci-interleaved", 4);
    config.pipeline.accum = 1;
    config.profiling.trace = true;
    const Ran ran = train(config, false);
    ASSERT_TRUE(ran.trace);
    const auto& attributes = ran.trace->meta().attributes;
    EXPECT_EQ(ran.trace->meta().stagesPerLane, 2);
    EXPECT_EQ(attributes.count("placement") ? attributes.at("placement") : "", "loop");
    auto schedule = makeSchedule(toScheduleParams(config));
    ASSERT_TRUE(schedule) << schedule.error().describe();
    const profiler::Report report = profiler::analyze(*ran.trace, analysisOptionsFor(*schedule));
    ASSERT_EQ(report.perStage.size(), static_cast<std::size_t>(kRanks));
    for (int r = 0; r < kRanks; ++r) {
        int measured = 0;
        for (int s = 0; s < kRanks * kChunks; ++s) {
            if (schedule->rankOf(s) == r) {
                measured = std::max(measured, ran.summary.stages[static_cast<std::size_t>(s)].maxLag);
            }
        }
        EXPECT_EQ(report.perStage[static_cast<std::size_t>(r)].maxVersionLag, measured) << "rank " << r;
    }
}

} // namespace
} // namespace bs::runtime
