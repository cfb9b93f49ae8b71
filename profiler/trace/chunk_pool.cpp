#include "profiler/trace/chunk_pool.h"

#include "base/huge_pages.h"
#include "profiler/trace/trace_store.h"

#include <mutex>
#include <new>
#include <vector>

namespace bs::profiler {

namespace {

constexpr std::size_t kChunkAlignment = std::size_t{2} << 20; // a huge page
constexpr std::size_t kChunkBytes = kTraceChunkSize * sizeof(TraceEvent);

struct IdleStorage
{
    std::mutex mutex;
    std::vector<std::byte*> chunks; // room for them all reserved up front: giving back never allocates
};

// Never destroyed: a chunk a static snapshot holds may be given back after exit began.
IdleStorage& idle()
{
    static auto* storage = [] {
        auto* s = new IdleStorage;
        s->chunks.reserve(kIdleChunkBytesKept / kChunkBytes);
        return s;
    }();
    return *storage;
}

void freeStorage(std::byte* storage) noexcept
{
    ::operator delete (storage, std::align_val_t{kChunkAlignment});
}

} // namespace

std::byte* takeChunkStorage()
{
    {
        IdleStorage& pool = idle();
        std::lock_guard lock(pool.mutex);
        if (!pool.chunks.empty()) {
            std::byte* storage = pool.chunks.back();
            pool.chunks.pop_back();
            return storage;
        }
    }
    auto* storage = static_cast<std::byte*>(::operator new (kChunkBytes, std::align_val_t{kChunkAlignment}));
    adviseHugePages(storage, kChunkBytes);
    return storage;
}

void giveBackChunkStorage(std::byte* storage) noexcept
{
    if (storage == nullptr) {
        return;
    }
    IdleStorage& pool = idle();
    {
        std::lock_guard lock(pool.mutex);
        if (pool.chunks.size() < pool.chunks.capacity()) {
            adviseFree(storage, kChunkBytes);
            pool.chunks.push_back(storage);
            return;
        }
    }
    freeStorage(storage);
}

std::size_t idleChunkBytes()
{
    IdleStorage& pool = idle();
    std::lock_guard lock(pool.mutex);
    return pool.chunks.size() * kChunkBytes;
}

void releaseIdleChunkStorage()
{
    std::vector<std::byte*> chunks;
    {
        IdleStorage& pool = idle();
        std::lock_guard lock(pool.mutex);
        chunks.assign(pool.chunks.begin(), pool.chunks.end());
        pool.chunks.clear(); // keeps its capacity: giving back still never allocates
    }
    for (std::byte* storage : chunks) {
        freeStorage(storage);
    }
}

} // namespace bs::profiler
