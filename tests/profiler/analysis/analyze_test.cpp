// Bubble attribution on hand-made traces where every idle nanosecond has a known cause.

#include "profiler/analysis/analyze.h"

#include "tests/support/trace_events.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>

namespace bs::profiler {
namespace {

using test::ev;

// Async: stage 0 forwards mb 2 after a wait [20,36) on mb 0's gradient, which stage 1 sends [30,36).
std::vector<TraceEvent> asyncStageWaitingOnAGradient()
{
    std::vector<TraceEvent> events = {
        ev(0, EventKind::Forward, 0, 0, 10),
        ev(0, EventKind::Forward, 1, 10, 20),
        ev(0, EventKind::Backward, 0, 36, 46),
        ev(0, EventKind::Forward, 2, 46, 56),
        ev(0, EventKind::Backward, 1, 56, 66),
        ev(0, EventKind::Backward, 2, 66, 76),
    };
    TraceEvent send = ev(1, EventKind::Send, 0, 30, 36);
    send.lane = Lane::Comm;
    send.aux = 0; // to stage 0
    events.push_back(send);
    return events;
}

TimeNs cause(const StageReport& s, BubbleCause c)
{
    return s.idleByCause[static_cast<std::size_t>(c)];
}

TEST(Analyze, AttributesWarmUpDrainDependencyAndComm)
{
    // Stage 0: F0 [0,10) F1 [10,20), waits for B0's gradient, which is sent [40,45); B0 [45,65), B1 [65,85).
    // Stage 1: idle until F0 arrives at 10+5 (comm 5), F0 [15,25) B0 [25,40) F1 [40,50) B1 [50,60)...
    std::vector<TraceEvent> events = {
        ev(0, EventKind::Forward, 0, 0, 10),
        ev(0, EventKind::Forward, 1, 10, 20),
        ev(1, EventKind::Forward, 0, 15, 25),
        ev(1, EventKind::Backward, 0, 25, 40),
        ev(0, EventKind::Backward, 0, 45, 65),
        ev(1, EventKind::Forward, 1, 40, 50),
        ev(1, EventKind::Backward, 1, 50, 60),
        ev(0, EventKind::Backward, 1, 65, 85),
    };
    TraceEvent send = ev(1, EventKind::Send, 0, 40, 45);
    send.lane = Lane::Comm;
    send.aux = 0; // to stage 0
    events.push_back(send);
    AnalysisOptions options;
    options.microbatchesPerBatch = 2;
    const Report r = analyze(*makeSnapshot({}, events), options);
    EXPECT_EQ(r.makespan, 85);
    const auto& s0 = r.perStage[0];
    EXPECT_EQ(s0.busy, 60);
    EXPECT_EQ(cause(s0, BubbleCause::WarmUp), 0);
    // Gap [20,45): after the last forward, so it is drain (the flush of this single batch).
    EXPECT_EQ(cause(s0, BubbleCause::Drain), 25);
    const auto& s1 = r.perStage[1];
    EXPECT_EQ(cause(s1, BubbleCause::WarmUp), 15);
    EXPECT_EQ(cause(s1, BubbleCause::Drain), 25); // [60,85)
    EXPECT_EQ(s1.idle, 40);
    EXPECT_EQ(s0.peakInflight, 2);
    EXPECT_EQ(s1.peakInflight, 1);
    EXPECT_DOUBLE_EQ(r.bubbleFraction, static_cast<double>(25 + 40) / (2.0 * 85));
}

TEST(Analyze, SplitsAWaitIntoCommAndDependency)
{
    // Async: stage 0 forwards mb 2 after a wait on mb 0's gradient, which arrives via a send [30,36).
    std::vector<TraceEvent> events = asyncStageWaitingOnAGradient();
    AnalysisOptions options;
    options.synchronous = false;
    const Report r = analyze(*makeSnapshot({}, events), options);
    const auto& s0 = r.perStage[0];
    EXPECT_EQ(cause(s0, BubbleCause::Comm), 6);
    EXPECT_EQ(cause(s0, BubbleCause::Dependency), 10);
}

// Two ranks holding two chunks each (loop placement: stages 0, 1 on ranks 0, 1 are chunk 0; 2, 3
// chunk 1). A rank receives two activations of one micro-batch, one per chunk, and rank 0's chunk
// 1 gets its activation from rank 1 (a lower lane). Each gap's comm is its own input's transfer:
// rank 0 waits [30,40) on stage 1 -> 2's send (it was taken for a gradient: 0 comm), rank 1 waits
// [30,35) on mb 1's send into chunk 0 (chunk 1's later send of mb 1 overwrote it: 0 comm) and
// [50,60) on mb 0's send into chunk 1.
TEST(Analyze, TransfersIntoARankAreToldApartByChunk)
{
    const auto forward = [](int rank, int chunk, int mb, TimeNs start, TimeNs end) {
        TraceEvent e = ev(rank, EventKind::Forward, mb, start, end);
        e.aux = static_cast<std::uint16_t>(chunk);
        return e;
    };
    const auto send = [](int from, int to, int mb, TimeNs start, TimeNs end) {
        TraceEvent e = ev(from, EventKind::Send, mb, start, end);
        e.lane = Lane::Comm;
        e.aux = static_cast<std::uint16_t>(to);
        return e;
    };
    const std::vector<TraceEvent> events = {
        forward(0, 0, 0, 0, 10), send(0, 1, 0, 10, 20), // stage 0 -> 1
        forward(0, 0, 1, 10, 20), send(0, 1, 1, 20, 35),
        forward(1, 0, 0, 20, 30), send(1, 0, 0, 30, 40), // stage 1 -> 2: rank 1 -> rank 0
        forward(1, 0, 1, 35, 45), send(1, 0, 1, 45, 50),
        forward(0, 1, 0, 40, 50), send(0, 1, 0, 50, 60), // stage 2 -> 3
        forward(0, 1, 1, 50, 60), send(0, 1, 1, 60, 70),
        forward(1, 1, 0, 60, 70),
        forward(1, 1, 1, 70, 80),
    };
    TraceMeta meta;
    meta.stages = 2;
    meta.stagesPerLane = 2;
    meta.attributes["placement"] = "loop";
    AnalysisOptions options;
    options.microbatchesPerBatch = 2;
    options.synchronous = false;
    const Report r = analyze(*makeSnapshot(meta, events), options);
    ASSERT_EQ(r.perStage.size(), 2u);
    EXPECT_EQ(cause(r.perStage[0], BubbleCause::Comm), 10); // [30,40)
    EXPECT_EQ(cause(r.perStage[0], BubbleCause::Dependency), 10); // [20,30)
    EXPECT_EQ(cause(r.perStage[1], BubbleCause::Comm), 5 + 10); // [30,35) and [50,60)
    EXPECT_EQ(cause(r.perStage[1], BubbleCause::Dependency), 5); // [45,50)
}

TEST(Analyze, BubbleSpansAreTheAttributionTheReportSums)
{
    // The same async trace: the spans say where each cause lies, and sum to the report exactly.
    std::vector<TraceEvent> events = asyncStageWaitingOnAGradient();
    events.push_back(ev(1, EventKind::Forward, 0, 12, 22));
    events.push_back(ev(1, EventKind::Backward, 0, 22, 30));
    AnalysisOptions options;
    options.synchronous = false;
    const auto snapshot = makeSnapshot({}, events);
    const std::vector<BubbleSpan> spans = analyze(*snapshot, options).bubbles;
    const Report r = analyze(*snapshot, options);
    std::array<std::array<TimeNs, kBubbleCauseCount>, 2> sums{};
    for (const auto& b : spans) {
        ASSERT_LT(b.start, b.end);
        sums[static_cast<std::size_t>(b.stage)][static_cast<std::size_t>(b.cause)] += b.end - b.start;
    }
    for (std::size_t s = 0; s < 2; ++s) {
        EXPECT_EQ(sums[s], r.perStage[s].idleByCause) << "stage " << s;
    }
    // Stage 0 waits [20,36): dependency until the gradient's send starts at 30, comm after.
    ASSERT_GE(spans.size(), 2u);
    EXPECT_EQ(spans[0].stage, 0);
    EXPECT_EQ(spans[0].cause, BubbleCause::Dependency);
    EXPECT_EQ(spans[0].start, 20);
    EXPECT_EQ(spans[0].end, 30);
    EXPECT_EQ(spans[1].cause, BubbleCause::Comm);
    EXPECT_EQ(spans[1].start, 30);
    EXPECT_EQ(spans[1].end, 36);
    // Stage 1: warm-up [0,12) then drain [30,76).
    const auto s1 = std::find_if(spans.begin(), spans.end(), [](const BubbleSpan& b) { return b.stage == 1; });
    ASSERT_NE(s1, spans.end());
    EXPECT_EQ(s1->cause, BubbleCause::WarmUp);
    EXPECT_EQ(s1->end, 12);
    EXPECT_EQ(spans.back().cause, BubbleCause::Drain);
    EXPECT_EQ(spans.back().start, 30);
    EXPECT_EQ(spans.back().end, 76);
}

TEST(Analyze, FlushSpansCoverOnlyTheFlushWindow)
{
    // Synchronous, m = 2, one stage: F0 F1 [0,20), B0 B1 [20,40), gap, F2 F3 [60,80), B2 B3 [80,100).
    // The flush window runs from the last forward of batch 0 (ends 20) to batch 1's first (60):
    // the idle part of it, [40,60), is flush.
    std::vector<TraceEvent> events = {
        ev(0, EventKind::Forward, 0, 0, 10),
        ev(0, EventKind::Forward, 1, 10, 20),
        ev(0, EventKind::Backward, 0, 20, 30),
        ev(0, EventKind::Backward, 1, 30, 40),
        ev(0, EventKind::Forward, 2, 60, 70),
        ev(0, EventKind::Forward, 3, 70, 80),
        ev(0, EventKind::Backward, 2, 80, 90),
        ev(0, EventKind::Backward, 3, 90, 100),
    };
    AnalysisOptions options;
    options.microbatchesPerBatch = 2;
    const std::vector<BubbleSpan> spans = analyze(*makeSnapshot({}, events), options).bubbles;
    ASSERT_EQ(spans.size(), 1u);
    EXPECT_EQ(spans[0].cause, BubbleCause::Flush);
    EXPECT_EQ(spans[0].start, 40);
    EXPECT_EQ(spans[0].end, 60);
}

TEST(Analyze, SettingsChangedMidRunAttributeFlushesPerSegment)
{
    // One stage. Batch 0 (mb 0-1) flushes: gap [40,60). From mb 2 on (a live Apply) batches have
    // 4 micro-batches and no flush: the gap [100,120) before mb 4 is a dependency wait.
    std::vector<TraceEvent> events = {
        ev(0, EventKind::Forward, 0, 0, 10),
        ev(0, EventKind::Forward, 1, 10, 20),
        ev(0, EventKind::Backward, 0, 20, 30),
        ev(0, EventKind::Backward, 1, 30, 40),
        ev(0, EventKind::Forward, 2, 60, 70),
        ev(0, EventKind::Forward, 3, 70, 80),
        ev(0, EventKind::Backward, 2, 80, 90),
        ev(0, EventKind::Backward, 3, 90, 100),
        ev(0, EventKind::Forward, 4, 120, 130),
        ev(0, EventKind::Backward, 4, 130, 140),
    };
    const auto snapshot = makeSnapshot({}, events);
    AnalysisOptions uniform;
    uniform.microbatchesPerBatch = 2;
    const Report before = analyze(*snapshot, uniform);
    EXPECT_EQ(cause(before.perStage[0], BubbleCause::Flush), 40); // both gaps, as one setting

    AnalysisOptions changed = uniform;
    changed.laterSettings.push_back({2, 4, false});
    const Report after = analyze(*snapshot, changed);
    EXPECT_EQ(cause(after.perStage[0], BubbleCause::Flush), 20);
    EXPECT_EQ(cause(after.perStage[0], BubbleCause::Dependency), 20);
    const std::vector<BubbleSpan> spans = analyze(*snapshot, changed).bubbles;
    ASSERT_EQ(spans.size(), 2u);
    EXPECT_EQ(spans[0].cause, BubbleCause::Flush);
    EXPECT_EQ(spans[0].start, 40);
    EXPECT_EQ(spans[1].cause, BubbleCause::Dependency);
    EXPECT_EQ(spans[1].start, 100);
    EXPECT_EQ(after.microbatches, 5);
}

TEST(Analyze, VersionLagAndStashedVersions)
{
    // F0 at v0, F1 at v0, B0 at v0, U -> v1, F2 at v1, B1 at v1 (lag 1), B2 at v1 (lag 0).
    std::vector<TraceEvent> events = {
        ev(0, EventKind::Forward, 0, 0, 1, 0),
        ev(0, EventKind::Forward, 1, 1, 2, 0),
        ev(0, EventKind::Backward, 0, 2, 3, 0),
        ev(0, EventKind::Update, 0, 3, 4, 0),
        ev(0, EventKind::Forward, 2, 4, 5, 1),
        ev(0, EventKind::Backward, 1, 5, 6, 1),
        ev(0, EventKind::Backward, 2, 6, 7, 1),
    };
    AnalysisOptions options;
    options.synchronous = false;
    options.stashesWeights = true;
    const Report r = analyze(*makeSnapshot({}, events), options);
    const auto& s = r.perStage[0];
    EXPECT_EQ(s.maxVersionLag, 1);
    EXPECT_EQ(s.versionLagHistogram, (std::map<int, int>{{0, 2}, {1, 1}}));
    EXPECT_EQ(s.peakWeightVersions, 2); // mb 1 needs v0 while v1 is current
    options.stashesWeights = false;
    EXPECT_EQ(analyze(*makeSnapshot({}, events), options).perStage[0].peakWeightVersions, 1);
}

TEST(Analyze, EmptyTraceGivesAnEmptyReport)
{
    const Report r = analyze(*makeSnapshot({}, {}), {});
    EXPECT_EQ(r.makespan, 0);
    EXPECT_TRUE(r.perStage.empty());
}

} // namespace
} // namespace bs::profiler
