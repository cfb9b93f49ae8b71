#include "base/recycled_storage.h"

#include "base/huge_pages.h"

#include <algorithm>
#include <bit>
#include <mutex>

namespace bs {

namespace {

constexpr std::size_t kBlockAlignment = std::size_t{2} << 20; // a huge page

// The size a block of `bytes` is made with and reused at: a multiple of 2 MiB and of an eighth of
// the power of two below it, so a class wastes at most an eighth and nearby sizes share one.
std::size_t sizeClass(std::size_t bytes)
{
    const std::size_t step = std::max(kBlockAlignment, std::bit_floor(bytes) / 8);
    return (bytes + step - 1) / step * step;
}

struct IdleBlock
{
    void* storage = nullptr;
    std::size_t bytes = 0; // its size class
};

struct IdleList
{
    std::mutex mutex;
    std::vector<IdleBlock> blocks; // room reserved up front: giving back never allocates
    std::size_t bytes = 0;
};

// Never destroyed: a static's buffer (a trace chunk a static snapshot holds) may be given back
// after exit began.
IdleList& idle()
{
    static auto* list = [] {
        auto* l = new IdleList;
        l->blocks.reserve(kIdleRecycledBytesKept / kRecycledMinBytes);
        return l;
    }();
    return *list;
}

void freeBlock(void* storage) noexcept
{
    ::operator delete (storage, std::align_val_t{kBlockAlignment});
}

} // namespace

void* takeRecycledStorage(std::size_t bytes)
{
    const std::size_t size = sizeClass(bytes);
    {
        IdleList& list = idle();
        std::lock_guard lock(list.mutex);
        // The most recently given back first: its pages are the likeliest still to be mapped.
        for (auto it = list.blocks.rbegin(); it != list.blocks.rend(); ++it) {
            if (it->bytes == size) {
                void* storage = it->storage;
                list.bytes -= size;
                list.blocks.erase(std::next(it).base());
                return storage;
            }
        }
    }
    void* storage = ::operator new (size, std::align_val_t{kBlockAlignment});
    adviseHugePages(storage, size);
    return storage;
}

void giveBackRecycledStorage(void* storage, std::size_t bytes) noexcept
{
    if (storage == nullptr) {
        return;
    }
    const std::size_t size = sizeClass(bytes);
    IdleList& list = idle();
    {
        std::lock_guard lock(list.mutex);
        if (list.bytes + size <= kIdleRecycledBytesKept && list.blocks.size() < list.blocks.capacity()) {
            adviseFree(storage, size);
            list.blocks.push_back({storage, size});
            list.bytes += size;
            return;
        }
    }
    freeBlock(storage);
}

std::size_t idleRecycledBytes()
{
    IdleList& list = idle();
    std::lock_guard lock(list.mutex);
    return list.bytes;
}

std::size_t idleRecycledBytes(std::size_t bytes)
{
    const std::size_t size = sizeClass(bytes);
    IdleList& list = idle();
    std::lock_guard lock(list.mutex);
    return size
        * static_cast<std::size_t>(
            std::count_if(list.blocks.begin(), list.blocks.end(), [&](const IdleBlock& b) { return b.bytes == size; }));
}

void releaseIdleRecycledStorage()
{
    std::vector<IdleBlock> blocks;
    {
        IdleList& list = idle();
        std::lock_guard lock(list.mutex);
        blocks.assign(list.blocks.begin(), list.blocks.end());
        list.blocks.clear(); // keeps its capacity: giving back still never allocates
        list.bytes = 0;
    }
    for (const IdleBlock& block : blocks) {
        freeBlock(block.storage);
    }
}

} // namespace bs
