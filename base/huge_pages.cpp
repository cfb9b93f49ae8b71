#include "base/huge_pages.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace bs {

namespace {

#if defined(__linux__)
// madvise() over the whole `unit`-aligned units inside [data, data + bytes), if there are any.
void adviseWhole(void* data, std::size_t bytes, std::uintptr_t unit, int advice)
{
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + unit - 1) & ~(unit - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(unit - 1);
    if (end > begin) {
        // Advice only: where the kernel refuses (THP disabled, say), nothing changes.
        (void)madvise(reinterpret_cast<void*>(begin), end - begin, advice);
    }
}
#endif

} // namespace

void adviseHugePages(void* data, std::size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    adviseWhole(data, bytes, std::uintptr_t{2} << 20, MADV_HUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
}

void adviseFree(void* data, std::size_t bytes)
{
#if defined(__linux__) && defined(MADV_FREE)
    adviseWhole(data, bytes, 4096, MADV_FREE);
#else
    (void)data;
    (void)bytes;
#endif
}

} // namespace bs
