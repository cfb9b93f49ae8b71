#include "profiler/trace/trace_store.h"

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

} // namespace
} // namespace bs::profiler
