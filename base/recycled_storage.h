#pragma once
// Large scratch buffers kept for the next call that needs one of the same size. A simulation under
// a slider, or a benchmark, builds the same tables call after call: at N = 10 000 some are tens of
// MB (the analysis's transfers and memory slots, every lane's idle spans). glibc serves anything
// over 32 MiB (the largest mmap threshold it accepts) with a fresh mapping and unmaps it on free,
// so each call paid a kernel fault and zeroing for every page again (docs/BENCHMARKS.md, issue
// #15). Here a freed block of at least kRecycledMinBytes goes to an idle list instead, advised free
// (MADV_FREE, base/huge_pages.h): the kernel may take its pages back whenever it needs memory, and
// until it does the next buffer of that size class is written into pages already mapped. Trace
// chunks (profiler/trace/trace_store.h, 10 MiB each) are recycled the same way, from the same list.

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace bs {

/// Smaller blocks go to the heap as usual (glibc keeps those mapped: base/heap_retention.h).
inline constexpr std::size_t kRecycledMinBytes = std::size_t{4} << 20;
/// At most this much idle storage is kept (size classes counted whole); more given back is freed.
/// N = 10 000 of the largest schedules in the simulator's bench: a 505 MB trace and ~200 MB of
/// analysis tables.
inline constexpr std::size_t kIdleRecycledBytesKept = std::size_t{1} << 30;

/// Storage for `bytes` (>= kRecycledMinBytes), on a 2 MiB boundary, huge pages advised: an idle
/// block of its size class (`bytes` rounded up to a multiple of 2 MiB and of an eighth of the power
/// of two below it) if any, else new. Throws std::bad_alloc.
void* takeRecycledStorage(std::size_t bytes);
/// Storage from takeRecycledStorage(bytes), with the same `bytes`, that the caller is done with.
void giveBackRecycledStorage(void* storage, std::size_t bytes) noexcept;
/// Bytes of idle storage held now (size classes counted whole).
std::size_t idleRecycledBytes();
/// Of those, the bytes in blocks that takeRecycledStorage(bytes) could hand out.
std::size_t idleRecycledBytes(std::size_t bytes);
/// Frees every idle block now.
void releaseIdleRecycledStorage();

/// A std::allocator that routes blocks of kRecycledMinBytes and more through the idle list above.
/// For scratch tables that are built again and again at the same size; stateless, so vectors
/// using it swap and move like any other.
template<typename T>
struct RecyclingAllocator
{
    using value_type = T;

    RecyclingAllocator() noexcept = default;
    template<typename U>
    RecyclingAllocator(const RecyclingAllocator<U>&) noexcept // NOLINT(google-explicit-constructor): rebinding
    {}

    T* allocate(std::size_t n)
    {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) {
            throw std::bad_array_new_length();
        }
        const std::size_t bytes = n * sizeof(T);
        if (bytes >= kRecycledMinBytes) {
            static_assert(alignof(T) <= (std::size_t{2} << 20));
            return static_cast<T*>(takeRecycledStorage(bytes));
        }
        return std::allocator<T>{}.allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept
    {
        if (n * sizeof(T) >= kRecycledMinBytes) {
            giveBackRecycledStorage(p, n * sizeof(T));
            return;
        }
        std::allocator<T>{}.deallocate(p, n);
    }

    template<typename U>
    friend bool operator==(const RecyclingAllocator&, const RecyclingAllocator<U>&) noexcept
    {
        return true;
    }
};

/// A vector whose large storage is recycled (RecyclingAllocator).
template<typename T>
using RecycledVector = std::vector<T, RecyclingAllocator<T>>;

/// `n` elements of storage left as they were (a recycled block's old contents, or fresh zeros),
/// through RecyclingAllocator: for a table whose entries are written before they are read (a count
/// beside it says which), so nothing is written to it up front.
template<typename T>
class RecycledBuffer
{
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

public:
    RecycledBuffer() = default;
    explicit RecycledBuffer(std::size_t n)
        : m_data(RecyclingAllocator<T>{}.allocate(n))
        , m_size(n)
    {}
    ~RecycledBuffer() { release(); }
    RecycledBuffer(RecycledBuffer&& other) noexcept
        : m_data(std::exchange(other.m_data, nullptr))
        , m_size(std::exchange(other.m_size, 0))
    {}
    RecycledBuffer& operator=(RecycledBuffer&& other) noexcept
    {
        if (this != &other) {
            release();
            m_data = std::exchange(other.m_data, nullptr);
            m_size = std::exchange(other.m_size, 0);
        }
        return *this;
    }
    RecycledBuffer(const RecycledBuffer&) = delete;
    RecycledBuffer& operator=(const RecycledBuffer&) = delete;

    T* data() { return m_data; }
    const T* data() const { return m_data; }
    std::size_t size() const { return m_size; }
    T& operator[](std::size_t i) { return m_data[i]; }
    const T& operator[](std::size_t i) const { return m_data[i]; }

private:
    void release() noexcept
    {
        if (m_data != nullptr) {
            RecyclingAllocator<T>{}.deallocate(m_data, m_size);
            m_data = nullptr;
            m_size = 0;
        }
    }

    T* m_data = nullptr;
    std::size_t m_size = 0;
};

} // namespace bs
