#pragma once
// Keeping freed heap memory for reuse. glibc hands freed memory back to the OS once more than a
// threshold (by default about twice the largest block it recently freed) is free at the top of
// the heap, and the next allocation page-faults it back in, zero-filled by the kernel. One
// simulate() call under a slider allocates and frees 5-15 MB (trace, schedule, bubbles): with the
// default thresholds the next call faulted ~1 500 pages back, 30-40 % of its time
// (docs/BENCHMARKS.md). The GUI and the CLI call this once at start-up.

#include <cstddef>

namespace bs {

/// Up to `bytes` of free memory at the top of a heap stays mapped, and blocks below 32 MiB come
/// from the heap instead of their own mapping. Returns false where the C library has no such
/// setting (only glibc's malloc is tuned; elsewhere this does nothing).
bool retainFreedHeap(std::size_t bytes = std::size_t{64} << 20);

} // namespace bs
