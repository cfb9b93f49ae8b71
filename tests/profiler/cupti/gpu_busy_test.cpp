#include "profiler/cupti/gpu_busy.h"

#include "profiler/cupti/activity_correlator.h"

#include <gtest/gtest.h>

using namespace bs::profiler;
using namespace bs::profiler::cupti;

namespace {

TraceEvent kernel(int stage, EventKind action, int mb, TimeNs start, TimeNs end, int version = 0)
{
    TraceEvent e;
    e.stage = static_cast<std::uint16_t>(stage);
    e.kind = EventKind::Kernel;
    e.lane = Lane::Kernel;
    e.aux = static_cast<std::uint16_t>(action);
    e.microbatch = mb;
    e.version = version;
    e.start = start;
    e.end = end;
    return e;
}

TraceEvent untagged(int stage, TimeNs start, TimeNs end)
{
    TraceEvent e = kernel(stage, EventKind::Forward, -1, start, end);
    e.aux = kUntagged;
    return e;
}

TraceEvent send(int from, int to, int mb, TimeNs start, TimeNs end)
{
    TraceEvent e;
    e.stage = static_cast<std::uint16_t>(from);
    e.kind = EventKind::Send;
    e.lane = Lane::Comm;
    e.aux = static_cast<std::uint16_t>(to);
    e.microbatch = mb;
    e.start = start;
    e.end = end;
    return e;
}

struct Span
{
    TimeNs start, end;
    EventKind kind;
    int mb;
};

void expectSpans(const std::vector<TraceEvent>& view, int stage, const std::vector<Span>& spans)
{
    std::vector<TraceEvent> got;
    for (const auto& e : view) {
        if (e.stage == stage && e.lane == Lane::Compute) {
            got.push_back(e);
        }
    }
    ASSERT_EQ(got.size(), spans.size()) << "stage " << stage;
    for (std::size_t i = 0; i < spans.size(); ++i) {
        EXPECT_EQ(got[i].start, spans[i].start) << i;
        EXPECT_EQ(got[i].end, spans[i].end) << i;
        EXPECT_EQ(got[i].kind, spans[i].kind) << i;
        EXPECT_EQ(got[i].microbatch, spans[i].mb) << i;
    }
}

} // namespace

TEST(GpuComputeView, MergesConcurrentKernelsWithoutCountingAnInstantTwice)
{
    const std::vector<TraceEvent> events = {
        kernel(0, EventKind::Forward, 0, 0, 100),
        kernel(0, EventKind::Forward, 0, 50, 150), // concurrent stream
        kernel(0, EventKind::Forward, 0, 20, 60),  // inside: adds nothing
        kernel(0, EventKind::Forward, 0, 150, 200),
    };
    expectSpans(gpuComputeView(events), 0, {{0, 200, EventKind::Forward, 0}});
}

TEST(GpuComputeView, EarlierActionOwnsAnOverlapAndDifferentActionsStaySeparate)
{
    const std::vector<TraceEvent> events = {
        kernel(2, EventKind::Backward, 1, 80, 150),
        kernel(2, EventKind::Forward, 0, 0, 100),
    };
    expectSpans(gpuComputeView(events), 2, {{0, 100, EventKind::Forward, 0}, {100, 150, EventKind::Backward, 1}});
}

TEST(GpuComputeView, UntaggedKernelsJoinThePreviousActionOrAreSkipped)
{
    const std::vector<TraceEvent> events = {
        untagged(1, 0, 10), // nothing to attribute it to yet
        kernel(1, EventKind::Forward, 3, 20, 50),
        untagged(1, 50, 70),
    };
    expectSpans(gpuComputeView(events), 1, {{20, 70, EventKind::Forward, 3}});
}

TEST(GpuComputeView, MergeGapAbsorbsLaunchGapsWithinOneActionOnly)
{
    const std::vector<TraceEvent> events = {
        kernel(0, EventKind::Forward, 0, 0, 100),
        kernel(0, EventKind::Forward, 0, 110, 200),
        kernel(0, EventKind::Backward, 0, 210, 300),
    };
    expectSpans(gpuComputeView(events), 0,
                {{0, 100, EventKind::Forward, 0}, {110, 200, EventKind::Forward, 0}, {210, 300, EventKind::Backward, 0}});
    expectSpans(gpuComputeView(events, {.mergeGap = 20}), 0,
                {{0, 200, EventKind::Forward, 0}, {210, 300, EventKind::Backward, 0}});
}

TEST(AnalyzeGpu, AttributesIdleGpuTimeByCause)
{
    // Stage 0 runs F0 on two streams, then F1; stage 1 waits for F0, then for F1's activation
    // that is in transit from 450 to 600.
    const std::vector<TraceEvent> events = {
        kernel(0, EventKind::Forward, 0, 0, 100),
        kernel(0, EventKind::Forward, 0, 50, 150),
        kernel(0, EventKind::Forward, 0, 150, 200),
        send(0, 1, 0, 200, 260),
        kernel(0, EventKind::Forward, 1, 250, 450),
        untagged(0, 450, 470),
        send(0, 1, 1, 450, 600),
        kernel(1, EventKind::Forward, 0, 300, 400),
        kernel(1, EventKind::Forward, 1, 600, 700),
    };
    TraceMeta meta;
    meta.stages = 2;
    AnalysisOptions options;
    options.microbatchesPerBatch = 2;
    options.synchronous = false;
    const Report r = analyzeGpu(*makeSnapshot(meta, events), options);
    ASSERT_EQ(r.perStage.size(), 2u);
    EXPECT_EQ(r.makespan, 700);
    const auto cause = [](const StageReport& s, BubbleCause c) { return s.idleByCause[static_cast<std::size_t>(c)]; };
    const auto& s0 = r.perStage[0];
    EXPECT_EQ(s0.busy, 420);
    EXPECT_EQ(cause(s0, BubbleCause::Dependency), 50);
    EXPECT_EQ(cause(s0, BubbleCause::Drain), 230);
    const auto& s1 = r.perStage[1];
    EXPECT_EQ(s1.busy, 200);
    EXPECT_EQ(cause(s1, BubbleCause::WarmUp), 300);
    EXPECT_EQ(cause(s1, BubbleCause::Comm), 150);
    EXPECT_EQ(cause(s1, BubbleCause::Dependency), 50);
    EXPECT_EQ(s1.idle, 500);
}
