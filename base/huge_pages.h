#pragma once
// Asking the kernel to back a large, not yet touched buffer with 2 MiB pages. A fresh 4 KiB page
// costs a kernel fault (~2.5 µs on the VMs this runs on, most of it bookkeeping, not zeroing), so
// a buffer of hundreds of MB that is written once (a long simulated trace) spends more time in
// faults than in being filled; with transparent huge pages in "madvise" mode (the common default)
// one fault maps 512 pages. Memory that is already mapped is unaffected, so this is harmless on
// a buffer the heap hands back from an earlier, freed one. On a VM that reports free 2 MiB blocks
// to its host (virtio-balloon free page reporting) zeroing a fresh huge page can wait on the host,
// so long runs vary more there (docs/BENCHMARKS.md, issue #15, measured both ways).

#include <cstddef>
#include <vector>

namespace bs {

/// Advises MADV_HUGEPAGE on the whole 2 MiB pages inside [data, data + bytes) (none when the range
/// holds no aligned 2 MiB). Does nothing where the system has no such advice (non-Linux).
void adviseHugePages(void* data, std::size_t bytes);

/// Tells the kernel that the whole pages inside [data, data + bytes) hold nothing worth keeping
/// (MADV_FREE): it may take them back whenever it needs memory, and until it does they stay
/// mapped, so writing there again costs no fault. For memory a process keeps idle for reuse. Does
/// nothing where the system has no such advice.
void adviseFree(void* data, std::size_t bytes);

/// Smaller than this, a buffer is left alone (a few huge pages at most would be at stake).
inline constexpr std::size_t kHugePageAdviceMin = std::size_t{4} << 20;

/// `v` with room for `n` elements, its storage advised before anything is written to it.
template<typename T>
void reserveAdvised(std::vector<T>& v, std::size_t n)
{
    if (n > v.capacity()) {
        v.reserve(n);
        if (n * sizeof(T) >= kHugePageAdviceMin) {
            adviseHugePages(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T));
        }
    }
}

/// v.assign(n, value), the storage advised first when it is newly allocated.
template<typename T>
void assignAdvised(std::vector<T>& v, std::size_t n, const T& value)
{
    if (n > v.capacity()) {
        v.clear();
        reserveAdvised(v, n);
    }
    v.assign(n, value);
}

} // namespace bs
