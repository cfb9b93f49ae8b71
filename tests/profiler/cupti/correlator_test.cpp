#include "profiler/cupti/activity_correlator.h"

#include <gtest/gtest.h>

#include <vector>

using namespace bs::profiler;
using namespace bs::profiler::cupti;

namespace {

constexpr std::uint32_t kOurKind = 4; // any value: the correlator only compares it

ActivityRecord external(std::uint32_t correlation, const ActionTag& tag, std::uint32_t kind = kOurKind)
{
    ActivityRecord r;
    r.kind = RecordKind::ExternalCorrelation;
    r.correlationId = correlation;
    r.externalId = *packTag(tag);
    r.externalKind = kind;
    return r;
}

ActivityRecord gpu(RecordKind kind, std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                   std::uint32_t stream = 7, std::uint64_t bytes = 0)
{
    ActivityRecord r;
    r.kind = kind;
    r.correlationId = correlation;
    r.start = start;
    r.end = end;
    r.streamId = stream;
    r.bytes = bytes;
    return r;
}

// GPU clock = host clock + 1'000'000; trace origin at host 500.
ActivityCorrelator makeCorrelator()
{
    const std::vector<ClockSample> s = {{0, 1'000'000, 0}};
    return ActivityCorrelator(ClockSync::fromSamples(s), 500, kOurKind);
}

} // namespace

TEST(ActivityCorrelator, KernelGetsItsLaunchingActionAndHostTime)
{
    auto c = makeCorrelator();
    std::vector<TraceEvent> out;
    const std::vector<ActivityRecord> records = {
        external(10, {3, EventKind::Backward, 17, 5}),
        gpu(RecordKind::Kernel, 10, 1'002'000, 1'003'500),
    };
    c.consume(records, out);
    ASSERT_EQ(out.size(), 1u);
    const auto& e = out[0];
    EXPECT_EQ(e.lane, Lane::Kernel);
    EXPECT_EQ(e.kind, EventKind::Kernel);
    EXPECT_EQ(e.stage, 3);
    EXPECT_EQ(e.microbatch, 17);
    EXPECT_EQ(e.version, 5);
    EXPECT_EQ(e.aux, static_cast<std::uint16_t>(EventKind::Backward));
    EXPECT_EQ(e.start, 2'000 - 500);
    EXPECT_EQ(e.end, 3'500 - 500);
    EXPECT_EQ(c.stats().kernels, 1u);
    EXPECT_EQ(c.stats().externalCorrelations, 1u);
}

TEST(ActivityCorrelator, ManyKernelsUnderOneCorrelationIdAllGetTheTag)
{
    auto c = makeCorrelator(); // a CUDA graph launch: one API call, many kernels
    std::vector<TraceEvent> out;
    const std::vector<ActivityRecord> records = {
        external(10, {1, EventKind::Forward, 2, 0}),
        gpu(RecordKind::Kernel, 10, 1'001'000, 1'002'000),
        gpu(RecordKind::Kernel, 10, 1'002'000, 1'003'000),
    };
    c.consume(records, out);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].stage, 1);
    EXPECT_EQ(out[1].microbatch, 2);
}

TEST(ActivityCorrelator, MemcpyUnderSendIsATransferOnTheCommLane)
{
    auto c = makeCorrelator();
    std::vector<TraceEvent> out;
    const std::vector<ActivityRecord> records = {
        external(1, {2, EventKind::Send, 4, 3}), // stage 2 sends micro-batch 4 to stage 3
        gpu(RecordKind::Memcpy, 1, 1'010'000, 1'012'000, 9, 4096),
        external(2, {2, EventKind::Forward, 4, 1}),
        gpu(RecordKind::Memcpy, 2, 1'005'000, 1'006'000, 7, 64),
        gpu(RecordKind::Memset, 2, 1'006'000, 1'006'100, 7, 32),
    };
    c.consume(records, out);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].lane, Lane::Comm);
    EXPECT_EQ(out[0].kind, EventKind::Send);
    EXPECT_EQ(out[0].aux, 3);
    EXPECT_EQ(out[0].bytes, 4096);
    EXPECT_EQ(out[1].lane, Lane::Kernel); // a copy inside a forward occupies the stage's stream
    EXPECT_EQ(out[1].aux, static_cast<std::uint16_t>(EventKind::Forward));
    EXPECT_EQ(out[2].lane, Lane::Kernel);
    EXPECT_EQ(out[2].bytes, 32);
    EXPECT_EQ(c.stats().memcpys, 2u);
    EXPECT_EQ(c.stats().memsets, 1u);
}

TEST(ActivityCorrelator, TagArrivingInALaterBufferStillTagsTheKernel)
{
    auto c = makeCorrelator();
    std::vector<TraceEvent> out;
    const std::vector<ActivityRecord> first = {gpu(RecordKind::Kernel, 20, 1'001'000, 1'002'000)};
    c.consume(first, out);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(c.pending(), 1u);
    const std::vector<ActivityRecord> second = {external(20, {5, EventKind::Forward, 1, 0})};
    c.consume(second, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].stage, 5);
    EXPECT_EQ(c.pending(), 0u);
    EXPECT_EQ(c.stats().untagged, 0u);
}

TEST(ActivityCorrelator, UntaggedKernelsArePlacedByStreamOrCounted)
{
    auto c = makeCorrelator();
    std::vector<TraceEvent> out;
    const std::vector<ActivityRecord> records = {
        external(1, {6, EventKind::Forward, 0, 0}),
        gpu(RecordKind::Kernel, 1, 1'001'000, 1'002'000, /*stream=*/7),
        gpu(RecordKind::Kernel, 2, 1'002'000, 1'003'000, /*stream=*/7), // no tag, stream seen at stage 6
        gpu(RecordKind::Kernel, 3, 1'002'000, 1'003'000, /*stream=*/8), // no tag, unknown stream
    };
    c.consume(records, out);
    EXPECT_EQ(out.size(), 1u);
    c.finish(out);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].stage, 6);
    EXPECT_EQ(out[1].aux, kUntagged);
    EXPECT_EQ(out[1].microbatch, -1);
    EXPECT_EQ(c.stats().untagged, 1u);
    EXPECT_EQ(c.stats().unattributed, 1u);
}

TEST(ActivityCorrelator, UntaggedKernelsDoNotWaitForTheEndOfTheRun)
{
    auto c = makeCorrelator();
    std::vector<TraceEvent> out;
    const std::vector<ActivityRecord> tagged = {external(1, {2, EventKind::Forward, 0, 0}),
                                                gpu(RecordKind::Kernel, 1, 1'001'000, 1'002'000)};
    c.consume(tagged, out);
    const std::vector<ActivityRecord> untagged = {gpu(RecordKind::Kernel, 99, 1'003'000, 1'004'000)};
    c.consume(untagged, out);
    const std::vector<ActivityRecord> none;
    c.consume(none, out);
    EXPECT_EQ(out.size(), 1u); // still waiting for a tag...
    c.consume(none, out);
    ASSERT_EQ(out.size(), 2u); // ...but not forever: a live view must show it
    EXPECT_EQ(out[1].aux, kUntagged);
    EXPECT_EQ(c.pending(), 0u);
}

TEST(ActivityCorrelator, ForeignExternalIdsAreIgnored)
{
    auto c = makeCorrelator();
    std::vector<TraceEvent> out;
    ActivityRecord bogus = external(2, {0, EventKind::Forward, 0, 0});
    bogus.externalId = std::uint64_t{0xF} << 48; // kind bits name no EventKind
    const std::vector<ActivityRecord> records = {
        external(1, {4, EventKind::Forward, 0, 0}, /*kind=*/kOurKind + 1), // someone else's (e.g. NVTX)
        bogus,
    };
    c.consume(records, out);
    EXPECT_EQ(c.stats().foreignCorrelations, 2u);
    const std::vector<ActivityRecord> kernels = {gpu(RecordKind::Kernel, 1, 1'001'000, 1'002'000)};
    c.consume(kernels, out);
    EXPECT_TRUE(out.empty());
}

TEST(ActivityCorrelator, CountsDroppedRecordsSynchronisationsAndUnparsedBytes)
{
    auto c = makeCorrelator();
    std::vector<TraceEvent> out;
    const std::vector<ActivityRecord> records = {gpu(RecordKind::Synchronization, 5, 1'000'000, 1'500'000)};
    c.consume(records, out);
    c.addDropped(3);
    c.addDropped(4);
    c.addUnparsed(128);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(c.stats().synchronizations, 1u);
    EXPECT_EQ(c.stats().droppedRecords, 7u);
    EXPECT_EQ(c.stats().unparsedBytes, 128u);
    EXPECT_EQ(c.stats().records, 1u);
}
