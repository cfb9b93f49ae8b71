// Synthetic activity buffers: CUPTI's own record structs, filled by hand and laid out as CUPTI
// lays them out (back to back, 8-byte aligned). cuptiActivityGetNextRecord works without a
// device, so CUPTI's walker is the oracle for where records start.
#include "profiler/cupti/activity_correlator.h"
#include "profiler/cupti/activity_adapter.h"
#include "profiler/cupti/activity_parser.h"
#include "profiler/cupti/gpu_busy.h"

#include <cupti.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace bs::profiler;
using namespace bs::profiler::cupti;
using detail::KernelRecord;
using detail::MemcpyRecord;
using detail::MemsetRecord;
using detail::SyncRecord;

namespace {

class BufferBuilder
{
public:
    template<typename R>
    BufferBuilder& add(const R& record)
    {
        const std::size_t offset = m_bytes.size();
        m_bytes.resize(offset + (sizeof(R) + 7) / 8 * 8, 0);
        std::memcpy(m_bytes.data() + offset, &record, sizeof(R));
        return *this;
    }
    BufferBuilder& kernel(std::uint32_t correlation, std::uint64_t start, std::uint64_t end, std::uint32_t stream = 7)
    {
        KernelRecord k{};
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = start;
        k.end = end;
        k.correlationId = correlation;
        k.streamId = stream;
        k.deviceId = 0;
        k.name = "gemm";
        return add(k);
    }
    BufferBuilder& tag(std::uint32_t correlation, const ActionTag& t)
    {
        CUpti_ActivityExternalCorrelation x{};
        x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
        x.externalId = *packTag(t);
        x.correlationId = correlation;
        return add(x);
    }
    BufferBuilder& memcpy(std::uint32_t correlation, std::uint64_t start, std::uint64_t end, std::uint64_t bytes)
    {
        MemcpyRecord m{};
        m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
        m.bytes = bytes;
        m.start = start;
        m.end = end;
        m.correlationId = correlation;
        m.streamId = 9;
        return add(m);
    }
    BufferBuilder& memset(std::uint32_t correlation, std::uint64_t start, std::uint64_t end, std::uint64_t bytes)
    {
        MemsetRecord m{};
        m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
        m.bytes = bytes;
        m.start = start;
        m.end = end;
        m.correlationId = correlation;
        m.streamId = 7;
        return add(m);
    }
    BufferBuilder& api(std::uint32_t correlation, std::uint32_t thread, std::uint64_t start, std::uint64_t end)
    {
        CUpti_ActivityAPI a{};
        a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
        a.cbid = 211; // cudaLaunchKernel's runtime callback id: any value, the parser ignores it
        a.start = start;
        a.end = end;
        a.processId = 1;
        a.threadId = thread;
        a.correlationId = correlation;
        return add(a);
    }
    BufferBuilder& peerCopy(std::uint32_t correlation, std::uint64_t start, std::uint64_t end, std::uint64_t bytes,
        std::uint32_t src, std::uint32_t dst)
    {
        detail::PeerCopyRecord m{};
        m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
        m.bytes = bytes;
        m.start = start;
        m.end = end;
        m.deviceId = src;
        m.srcDeviceId = src;
        m.dstDeviceId = dst;
        m.streamId = 21;
        m.correlationId = correlation;
        return add(m);
    }
    BufferBuilder& sync(std::uint32_t correlation, std::uint64_t start, std::uint64_t end)
    {
        SyncRecord s{};
        s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
        s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
        s.start = start;
        s.end = end;
        s.correlationId = correlation;
        return add(s);
    }
    std::vector<std::uint8_t>& bytes() { return m_bytes; }

private:
    std::vector<std::uint8_t> m_bytes;
};

// Offsets of the records CUPTI's own walker finds in the buffer.
std::vector<std::ptrdiff_t> cuptiWalk(std::vector<std::uint8_t>& bytes)
{
    std::vector<std::ptrdiff_t> offsets;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(bytes.data(), bytes.size(), &record) == CUPTI_SUCCESS) {
        offsets.push_back(reinterpret_cast<std::uint8_t*>(record) - bytes.data());
    }
    return offsets;
}

} // namespace

TEST(ActivityParser, ReadsEveryEnabledKindWithItsFields)
{
    BufferBuilder b;
    b.tag(1, {2, EventKind::Forward, 5, 3}).kernel(1, 1'000, 2'000).memcpy(2, 2'000, 2'500, 1 << 20).memset(3, 2'600, 2'700, 64).sync(4, 2'700, 2'900);
    const auto parsed = parseActivityBuffer(b.bytes());
    ASSERT_EQ(parsed.records.size(), 5u);
    EXPECT_EQ(parsed.unparsedBytes, 0u);
    const auto& x = parsed.records[0];
    EXPECT_EQ(x.kind, RecordKind::ExternalCorrelation);
    EXPECT_EQ(x.externalKind, static_cast<std::uint32_t>(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0));
    EXPECT_EQ(unpackTag(x.externalId)->microbatch, 5);
    EXPECT_EQ(x.correlationId, 1u);
    const auto& k = parsed.records[1];
    EXPECT_EQ(k.kind, RecordKind::Kernel);
    EXPECT_EQ(k.start, 1'000u);
    EXPECT_EQ(k.end, 2'000u);
    EXPECT_EQ(k.correlationId, 1u);
    EXPECT_EQ(k.streamId, 7u);
    const auto& m = parsed.records[2];
    EXPECT_EQ(m.kind, RecordKind::Memcpy);
    EXPECT_EQ(m.bytes, 1u << 20);
    EXPECT_EQ(m.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
    EXPECT_EQ(m.streamId, 9u);
    EXPECT_EQ(parsed.records[3].kind, RecordKind::Memset);
    EXPECT_EQ(parsed.records[3].bytes, 64u);
    EXPECT_EQ(parsed.records[4].kind, RecordKind::Synchronization);
    EXPECT_EQ(parsed.records[4].end, 2'900u);
}

TEST(ActivityParser, FindsRecordsWhereCuptisOwnWalkerDoes)
{
    BufferBuilder b;
    for (std::uint32_t i = 0; i < 50; ++i) {
        b.tag(i, {static_cast<int>(i % 8), EventKind::Backward, static_cast<int>(i), 0});
        b.kernel(i, 100 * i + 1, 100 * i + 50); // start 0 would be an incomplete record
        if (i % 3 == 0) {
            b.memcpy(i, 100 * i + 50, 100 * i + 60, 8);
        }
        if (i % 7 == 0) {
            b.sync(i, 100 * i + 60, 100 * i + 70);
        }
    }
    const auto offsets = cuptiWalk(b.bytes());
    const auto parsed = parseActivityBuffer(b.bytes());
    ASSERT_EQ(parsed.records.size(), offsets.size());
    // Same number of records and the same kinds in order, so the sizes we step by are CUPTI's.
    for (std::size_t i = 0; i < offsets.size(); ++i) {
        CUpti_Activity head{};
        std::memcpy(&head, b.bytes().data() + offsets[i], sizeof head);
        const bool isKernel = head.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        EXPECT_EQ(parsed.records[i].kind == RecordKind::Kernel, isKernel) << i;
    }
}

TEST(ActivityParser, StepsOverKindsItDoesNotReadAndStopsOnlyAtAnInvalidOne)
{
    BufferBuilder b;
    b.kernel(1, 1, 10);
    CUpti_ActivityMarker2 marker{}; // a kind the adapter does not read (e.g. enabled by another tool)
    marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
    CUpti_ActivityCudaEvent2 event{};
    event.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
    b.add(marker).kernel(2, 10, 20).add(event).kernel(3, 20, 30);
    const auto parsed = parseActivityBuffer(b.bytes());
    ASSERT_EQ(parsed.records.size(), 3u); // before: 1, the rest of the buffer lost at the marker
    EXPECT_EQ(parsed.records[2].correlationId, 3u);
    EXPECT_EQ(parsed.unknownRecords, 2u);
    EXPECT_EQ(parsed.unparsedBytes, 0u);

    BufferBuilder invalid; // kind 0: nobody (not CUPTI's walker either) knows its size
    invalid.kernel(1, 1, 10);
    KernelRecord zero{};
    invalid.add(zero).kernel(2, 10, 20);
    const auto cut = parseActivityBuffer(invalid.bytes());
    ASSERT_EQ(cut.records.size(), 1u);
    EXPECT_EQ(cut.unparsedBytes, invalid.bytes().size() - sizeof(KernelRecord));
}

TEST(ActivityParser, ReadsApiAndPeerToPeerRecordsAndLeavesOutIncompleteOnes)
{
    BufferBuilder b;
    b.tag(5, {1, EventKind::Forward, 3, 0});
    b.api(5, /*thread=*/42, 900, 950).kernel(5, 1'000, 0); // end not written yet: a forced flush
    b.kernel(6, 0, 0).kernel(7, 1'100, 1'200);
    b.peerCopy(8, 1'200, 1'300, 4096, /*src=*/0, /*dst=*/1);
    const auto offsets = cuptiWalk(b.bytes());
    const auto parsed = parseActivityBuffer(b.bytes());
    EXPECT_EQ(offsets.size(), 6u); // CUPTI's walker agrees on the sizes of API and MEMCPY2 records
    EXPECT_EQ(parsed.incompleteRecords, 2u);
    EXPECT_EQ(parsed.unparsedBytes, 0u);
    ASSERT_EQ(parsed.records.size(), 4u);
    EXPECT_EQ(parsed.records[1].kind, RecordKind::Api);
    EXPECT_EQ(parsed.records[1].correlationId, 5u);
    EXPECT_EQ(parsed.records[1].threadId, 42u);
    EXPECT_EQ(parsed.records[2].correlationId, 7u);
    const auto& p = parsed.records[3];
    EXPECT_EQ(p.kind, RecordKind::Memcpy);
    EXPECT_TRUE(p.peerToPeer);
    EXPECT_EQ(p.bytes, 4096u);
    EXPECT_EQ(p.srcDeviceId, 0u);
    EXPECT_EQ(p.dstDeviceId, 1u);
    EXPECT_EQ(p.correlationId, 8u);
}

// What a GPU run's buffers hold: the host thread of each stage pushes its action's tag (an
// external correlation record in front of its API record), but autograd launches backward
// kernels from its own device thread, where no tag was pushed. Every stage works on its own
// stream, bound to it, so each kernel lands on its stage; a stale tag on another stage's
// stream is counted and not believed.
TEST(ActivityPipeline, KernelsLaunchedOnAnotherThreadLandOnTheirStreamsStage)
{
    constexpr std::uint32_t kStage0Stream = 13, kStage1Stream = 14, kMainThread = 1, kAutogradThread = 2;
    BufferBuilder b;
    b.tag(1, {0, EventKind::Forward, 0, 0}).api(1, kMainThread, 5, 6).kernel(1, 10, 20, kStage0Stream);
    b.tag(2, {1, EventKind::Forward, 0, 0}).api(2, kMainThread, 7, 8).kernel(2, 20, 30, kStage1Stream);
    // stage 1's backward: the host thread pushed B, autograd's thread launched without a tag
    b.api(3, kAutogradThread, 31, 32).kernel(3, 40, 50, kStage1Stream);
    // stage 0's backward, same; then a kernel under stage 0's tag that ran on stage 1's stream
    b.api(4, kAutogradThread, 51, 52).kernel(4, 60, 70, kStage0Stream);
    b.tag(5, {0, EventKind::Backward, 0, 0}).api(5, kMainThread, 71, 72).kernel(5, 80, 90, kStage1Stream);
    const std::vector<ClockSample> samples = {{0, 0, 0}};
    ActivityCorrelator correlator(ClockSync::fromSamples(samples), 0, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    correlator.bindStream(0, kStage0Stream, 0);
    correlator.bindStream(0, kStage1Stream, 1);
    std::vector<TraceEvent> events;
    const auto parsed = parseActivityBuffer(b.bytes());
    correlator.consume(parsed.records, events);
    correlator.finish(events);
    ASSERT_EQ(events.size(), 5u);
    std::vector<int> stageAt(100, -1);
    for (const TraceEvent& e : events) {
        stageAt[static_cast<std::size_t>(e.start)] = e.stage;
    }
    EXPECT_EQ(stageAt[10], 0);
    EXPECT_EQ(stageAt[20], 1);
    EXPECT_EQ(stageAt[40], 1); // by stream: the last tag seen was stage 1's too
    EXPECT_EQ(stageAt[60], 0); // by stream: by "last tag seen" it would have gone to stage 1
    EXPECT_EQ(stageAt[80], 1); // the stream, not the stale tag
    EXPECT_EQ(correlator.stats().apiRecords, 5u);
    EXPECT_EQ(correlator.stats().externalCorrelations, 3u);
    EXPECT_EQ(correlator.stats().untagged, 3u);
    EXPECT_EQ(correlator.stats().tagMismatches, 1u);
    EXPECT_EQ(correlator.stats().unattributed, 0u);
}

// A hand-off between two GPUs as the runtime makes it: the receiving stage (1, on device 1) runs
// its forward under its tag and, nested, pushes a Send tag (sender 0, receiver 1) around the copy,
// which runs on a pool stream of the source device (bound to no stage) and which CUPTI reports
// as a MEMCPY2 record in front of which sits the Send tag's external correlation. The copy is the
// sender's transfer on the comm lane; the receiver's kernel after the pop is its forward's.
TEST(ActivityPipeline, APeerCopyUnderANestedSendTagIsTheSendersTransfer)
{
    constexpr std::uint32_t kStage0Stream = 13, kStage1Stream = 14, kCopyStream = 21, kThread = 3;
    BufferBuilder b;
    b.tag(1, {1, EventKind::Forward, 4, 0}).api(1, kThread, 5, 6); // cudaStreamWaitEvent: no GPU record
    b.tag(2, {0, EventKind::Send, 4, 1}).api(2, kThread, 7, 8).peerCopy(2, 10, 30, 1 << 20, /*src=*/0, /*dst=*/1);
    b.tag(3, {1, EventKind::Forward, 4, 0}).api(3, kThread, 9, 10).kernel(3, 31, 60, kStage1Stream);
    auto& bytes = b.bytes();
    // the copy ran on the source device's pool stream
    detail::PeerCopyRecord copy{};
    const std::size_t copyAt = static_cast<std::size_t>(cuptiWalk(bytes)[4]);
    std::memcpy(&copy, bytes.data() + copyAt, sizeof copy);
    ASSERT_EQ(copy.kind, CUPTI_ACTIVITY_KIND_MEMCPY2);
    EXPECT_EQ(copy.streamId, kCopyStream);
    const std::vector<ClockSample> samples = {{0, 0, 0}};
    ActivityCorrelator correlator(ClockSync::fromSamples(samples), 0, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    correlator.bindStream(0, kStage0Stream, 0);
    correlator.bindStream(1, kStage1Stream, 1);
    std::vector<TraceEvent> events;
    correlator.consume(parseActivityBuffer(bytes).records, events);
    correlator.finish(events);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].lane, Lane::Comm);
    EXPECT_EQ(events[0].kind, EventKind::Send);
    EXPECT_EQ(events[0].stage, 0);
    EXPECT_EQ(events[0].aux, 1);
    EXPECT_EQ(events[0].microbatch, 4);
    EXPECT_EQ(events[0].bytes, 1 << 20);
    EXPECT_EQ(events[0].start, 10);
    EXPECT_EQ(events[1].lane, Lane::Kernel);
    EXPECT_EQ(events[1].stage, 1);
    EXPECT_EQ(events[1].aux, static_cast<std::uint16_t>(EventKind::Forward));
    EXPECT_EQ(correlator.stats().peerCopies, 1u);
    EXPECT_EQ(correlator.stats().tagMismatches, 0u);
    EXPECT_EQ(correlator.stats().unattributed, 0u);
}

TEST(ActivityParser, NeverReadsPastTheValidBytes)
{
    BufferBuilder b;
    b.kernel(1, 1, 10).kernel(2, 10, 20);
    const std::size_t cut = sizeof(KernelRecord) + 40; // the second record is cut short
    const auto parsed = parseActivityBuffer(std::span<const std::uint8_t>(b.bytes().data(), cut));
    ASSERT_EQ(parsed.records.size(), 1u);
    EXPECT_EQ(parsed.unparsedBytes, 40u);
    EXPECT_TRUE(parseActivityBuffer({}).records.empty());
}

TEST(ActivityPipeline, BufferToTaggedTraceToGpuBubbles)
{
    // Two stages on one GPU clock that is 10'000 ns ahead of the host; origin at host 0.
    BufferBuilder b;
    b.tag(1, {0, EventKind::Forward, 0, 0}).kernel(1, 10'000, 10'100, 7);
    b.tag(2, {0, EventKind::Send, 0, 1}).memcpy(2, 10'100, 10'150, 4096);
    b.tag(3, {1, EventKind::Forward, 0, 0}).kernel(3, 10'200, 10'300, 8);
    b.tag(4, {1, EventKind::Backward, 0, 0}).kernel(4, 10'300, 10'500, 8);
    b.tag(5, {0, EventKind::Backward, 0, 0}).kernel(5, 10'550, 10'750, 7);
    const std::vector<ClockSample> samples = {{0, 10'000, 0}};
    ActivityCorrelator correlator(ClockSync::fromSamples(samples), 0, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    std::vector<TraceEvent> events;
    correlator.consume(parseActivityBuffer(b.bytes()).records, events);
    correlator.finish(events);
    ASSERT_EQ(events.size(), 5u);
    EXPECT_EQ(events[1].lane, Lane::Comm);
    EXPECT_EQ(events[1].start, 100);
    EXPECT_EQ(events[1].end, 150);
    TraceMeta meta;
    meta.stages = 2;
    const Report r = analyzeGpu(*makeSnapshot(meta, events), AnalysisOptions{});
    EXPECT_EQ(r.makespan, 750);
    ASSERT_EQ(r.perStage.size(), 2u);
    EXPECT_EQ(r.perStage[0].busy, 300);
    EXPECT_EQ(r.perStage[1].busy, 300);
    EXPECT_EQ(r.perStage[1].idleByCause[static_cast<std::size_t>(BubbleCause::WarmUp)], 200);
    // Stage 0 idles 450 ns after its last forward, until the gradient returns: drain (analyze.h).
    EXPECT_EQ(r.perStage[0].idleByCause[static_cast<std::size_t>(BubbleCause::Drain)], 450);
    EXPECT_EQ(r.perStage[0].idle, 450);
}
