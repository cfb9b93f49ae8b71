#pragma once
// Storage for trace chunks, kept for reuse when a trace is dropped. A simulation under a slider
// drops the last run's trace and writes the next one at once; a long run's trace is hundreds of MB,
// and fresh memory costs a kernel fault and zeroing for every page (on the VMs this runs on, more
// than writing the events: docs/BENCHMARKS.md, issue #15). Idle storage is advised free
// (base/huge_pages.h, MADV_FREE), so the kernel takes it back whenever it needs the memory and
// this costs the system nothing it wants; until then the next trace writes into pages already
// mapped.

#include <cstddef>

namespace bs::profiler {

/// At most this much idle chunk storage is kept (48 chunks: N = 10 000 of the largest schedules
/// in the simulator's bench). Storage given back beyond it is freed.
inline constexpr std::size_t kIdleChunkBytesKept = std::size_t{480} << 20;

/// Storage for one chunk (kChunkBytes, on a 2 MiB boundary, huge pages advised): an idle one if
/// any, else new. Throws std::bad_alloc.
std::byte* takeChunkStorage();
/// Storage from takeChunkStorage() the caller is done with (null: nothing).
void giveBackChunkStorage(std::byte* storage) noexcept;
/// Bytes of idle storage held now.
std::size_t idleChunkBytes();
/// Frees every idle storage now.
void releaseIdleChunkStorage();

} // namespace bs::profiler
