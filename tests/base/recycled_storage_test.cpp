#include "base/recycled_storage.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using bs::idleRecycledBytes;
using bs::kIdleRecycledBytesKept;
using bs::kRecycledMinBytes;
using bs::RecycledBuffer;
using bs::RecycledVector;
using bs::releaseIdleRecycledStorage;

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(RecycledStorage, ALargeFreedBlockIsHandedOutAgainForTheSameSize)
{
    releaseIdleRecycledStorage();
    const std::size_t n = 6 * kMiB / sizeof(std::int64_t);
    const std::int64_t* first = nullptr;
    {
        RecycledVector<std::int64_t> v(n, 7);
        first = v.data();
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % (2 * kMiB), 0u); // huge-page aligned
    }
    EXPECT_GE(idleRecycledBytes(), 6 * kMiB);
    {
        RecycledVector<std::int64_t> again(n, 3); // the same storage, written again
        EXPECT_EQ(again.data(), first);
        EXPECT_EQ(again.back(), 3);
        EXPECT_EQ(idleRecycledBytes(), 0u);
        // A size in another class gets other storage, while the first is in use.
        RecycledVector<std::int64_t> larger(4 * n, 1);
        EXPECT_NE(larger.data(), first);
    }
    releaseIdleRecycledStorage();
    EXPECT_EQ(idleRecycledBytes(), 0u);
}

TEST(RecycledStorage, SmallBlocksStayOnTheHeapAndTheIdleListIsCapped)
{
    releaseIdleRecycledStorage();
    {
        RecycledVector<char> small(kRecycledMinBytes - 1, 'x');
    }
    EXPECT_EQ(idleRecycledBytes(), 0u); // below the threshold: glibc's, not ours

    // More dropped at once than the cap keeps: the rest are freed.
    const std::size_t blockBytes = 64 * kMiB;
    {
        std::vector<RecycledBuffer<char>> blocks;
        for (std::size_t i = 0; i < kIdleRecycledBytesKept / blockBytes + 3; ++i) {
            blocks.emplace_back(blockBytes);
        }
    }
    EXPECT_EQ(idleRecycledBytes(), kIdleRecycledBytesKept);
    releaseIdleRecycledStorage();
    EXPECT_EQ(idleRecycledBytes(), 0u);
}

TEST(RecycledStorage, ABufferMovesItsStorageAndGivesItBackOnce)
{
    releaseIdleRecycledStorage();
    RecycledBuffer<std::int32_t> a(8 * kMiB / sizeof(std::int32_t));
    a[0] = 41;
    const std::int32_t* storage = a.data();
    RecycledBuffer<std::int32_t> b(std::move(a));
    EXPECT_EQ(b.data(), storage);
    EXPECT_EQ(b[0], 41);
    EXPECT_EQ(a.data(), nullptr); // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_EQ(a.size(), 0u); // NOLINT(bugprone-use-after-move)
    RecycledBuffer<std::int32_t> c;
    c = std::move(b);
    EXPECT_EQ(c.data(), storage);
    c = RecycledBuffer<std::int32_t>();
    EXPECT_EQ(idleRecycledBytes(), 8 * kMiB); // given back once, by the assignment
    releaseIdleRecycledStorage();
}

} // namespace
