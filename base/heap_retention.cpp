#include "base/heap_retention.h"

#include <climits>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace bs {

bool retainFreedHeap(std::size_t bytes)
{
#if defined(__GLIBC__)
    // A fixed mmap threshold also stops glibc's dynamic one from moving the trim threshold back.
    // 32 MiB is the largest glibc accepts on 64-bit (half its per-thread heap size).
    const int trim = bytes > static_cast<std::size_t>(INT_MAX) ? INT_MAX : static_cast<int>(bytes);
    return mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 && mallopt(M_TRIM_THRESHOLD, trim) == 1;
#else
    (void)bytes;
    return false;
#endif
}

} // namespace bs
