#include "profiler/trace/trace_store.h"

#include "base/recycled_storage.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

namespace bs::profiler {
namespace {

TraceEvent event(int i)
{
    TraceEvent e;
    e.start = i * 10;
    e.end = i * 10 + 5;
    e.microbatch = i;
    e.stage = static_cast<std::uint16_t>(i % 8);
    return e;
}

TEST(TraceStore, SnapshotIsFrozenWhileTheWriterContinues)
{
    TraceStore store;
    for (int i = 0; i < 100; ++i) {
        store.append(event(i));
    }
    auto before = store.snapshot();
    for (int i = 100; i < 200; ++i) {
        store.append(event(i));
    }
    EXPECT_EQ(before->size(), 100u);
    EXPECT_EQ((*before)[99].microbatch, 99);
    EXPECT_EQ(store.snapshot()->size(), 200u);
}

TEST(TraceStore, CrossesChunkBoundariesWithoutLosingEvents)
{
    TraceStore store;
    const std::size_t n = kTraceChunkSize * 2 + 17;
    for (std::size_t i = 0; i < n; ++i) {
        store.append(event(static_cast<int>(i)));
    }
    auto snap = store.snapshot();
    ASSERT_EQ(snap->size(), n);
    for (std::size_t i : {std::size_t{0}, kTraceChunkSize - 1, kTraceChunkSize, n - 1}) {
        EXPECT_EQ((*snap)[i].microbatch, static_cast<int>(i));
    }
    EXPECT_EQ(snap->endTime(), static_cast<TimeNs>(n - 1) * 10 + 5);
}

TEST(TraceStore, BulkAppendsAcrossChunksEqualOneByOne)
{
    // The simulator hands events over in batches; a batch that straddles a chunk boundary (or
    // spans whole chunks) must land exactly where one-by-one appends put them.
    TraceStore single;
    TraceStore bulk;
    std::vector<TraceEvent> batch;
    int next = 0;
    for (std::size_t size : {std::size_t{1000}, kTraceChunkSize - 1001, std::size_t{3}, kTraceChunkSize + 5,
             std::size_t{0}, std::size_t{40}}) {
        batch.clear();
        for (std::size_t i = 0; i < size; ++i, ++next) {
            batch.push_back(event(next));
            single.append(batch.back());
        }
        bulk.append(batch.data(), batch.size());
    }
    auto a = single.snapshot();
    auto b = bulk.snapshot();
    ASSERT_EQ(b->size(), static_cast<std::size_t>(next));
    ASSERT_EQ(a->size(), b->size());
    for (std::size_t i = 0; i < a->size(); ++i) {
        ASSERT_EQ((*b)[i].microbatch, static_cast<int>(i)) << i;
        ASSERT_EQ((*b)[i].start, (*a)[i].start) << i;
    }
}

TEST(TraceStore, ClearKeepsOldSnapshotsValid)
{
    TraceStore store;
    store.append(event(1));
    auto snap = store.snapshot();
    store.clear();
    EXPECT_EQ(store.size(), 0u);
    ASSERT_EQ(snap->size(), 1u);
    EXPECT_EQ((*snap)[0].microbatch, 1);
}

// Readers snapshot while a writer appends: every snapshot sees a prefix in order (run under TSan).
TEST(TraceStore, ConcurrentAppendAndSnapshot)
{
    TraceStore store;
    constexpr int kEvents = 200'000;
    std::thread writer([&] {
        for (int i = 0; i < kEvents; ++i) {
            store.append(event(i));
        }
    });
    std::size_t last = 0;
    while (last < static_cast<std::size_t>(kEvents)) {
        auto snap = store.snapshot();
        ASSERT_GE(snap->size(), last);
        if (!snap->empty()) {
            EXPECT_EQ((*snap)[snap->size() - 1].microbatch, static_cast<int>(snap->size() - 1));
        }
        last = snap->size();
    }
    writer.join();
}

// A reader that follows the writer (the simulator's analysis behind its scheduler core) reads
// every event once, in order, each run of them within one chunk, while the writer appends in
// place through appendSpace()/commit() (run under TSan).
TEST(TraceStore, PublishedEventsFollowTheWriterChunkByChunk)
{
    TraceStore store;
    std::size_t count = 7;
    std::shared_ptr<const TraceChunk> chunk;
    EXPECT_EQ(store.published(0, count, chunk), nullptr);
    EXPECT_EQ(count, 0u);
    const std::size_t total = kTraceChunkSize + kTraceChunkSize / 2 + 3; // crosses a chunk boundary
    std::thread writer([&] {
        for (std::size_t written = 0; written < total;) {
            std::size_t room = 0;
            TraceEvent* slots = store.appendSpace(room);
            const std::size_t n = std::min({room, std::size_t{1000}, total - written});
            for (std::size_t i = 0; i < n; ++i) {
                slots[i] = event(static_cast<int>(written + i));
            }
            store.commit(n);
            written += n;
        }
    });
    std::size_t next = 0;
    bool inOrder = true;
    while (next < total) {
        const TraceEvent* events = store.published(next, count, chunk);
        if (count == 0) {
            std::this_thread::yield();
            continue;
        }
        // One chunk at most: a run never crosses a boundary.
        ASSERT_LE(next % kTraceChunkSize + count, kTraceChunkSize);
        for (std::size_t i = 0; i < count; ++i) {
            inOrder = inOrder && events[i].microbatch == static_cast<int>(next + i);
        }
        next += count;
    }
    writer.join();
    EXPECT_TRUE(inOrder);
    EXPECT_EQ(next, total);
    EXPECT_EQ(store.published(total, count, chunk), nullptr);
    EXPECT_EQ(count, 0u);
    store.clear();
    EXPECT_EQ(store.published(0, count, chunk), nullptr); // nothing after a clear
}

// A dropped trace's chunk storage is what the next trace writes into (no fresh pages), up to
// kIdleRecycledBytesKept of it idle, and all of it can be handed back.
TEST(TraceChunkPool, ADroppedTracesStorageIsReusedUpToTheCap)
{
    releaseIdleRecycledStorage();
    const TraceEvent* first = nullptr;
    {
        TraceStore store;
        store.append(event(1));
        first = &(*store.snapshot())[0];
    }
    const std::size_t chunkBytes = kTraceChunkBytes;
    EXPECT_EQ(idleRecycledBytes(chunkBytes), chunkBytes);
    {
        TraceStore store;
        store.append(event(2));
        EXPECT_EQ(&(*store.snapshot())[0], first); // the same storage, written again
        EXPECT_EQ((*store.snapshot())[0].microbatch, 2);
        EXPECT_EQ(idleRecycledBytes(chunkBytes), 0u);
    }
    // More chunks dropped at once than the cap keeps: the rest are freed.
    const std::size_t keep = kIdleRecycledBytesKept / chunkBytes;
    {
        std::vector<std::unique_ptr<TraceChunk>> chunks;
        for (std::size_t i = 0; i < keep + 3; ++i) {
            chunks.push_back(std::make_unique<TraceChunk>());
        }
    }
    EXPECT_EQ(idleRecycledBytes(chunkBytes), keep * chunkBytes);
    EXPECT_EQ(idleRecycledBytes(), keep * chunkBytes); // nothing else idle
    releaseIdleRecycledStorage();
    EXPECT_EQ(idleRecycledBytes(), 0u);
}

} // namespace
} // namespace bs::profiler
