#pragma once
// Per-stage memory on CUDA devices, split by kind like the CPU tracker (memory_tracker.h). The CPU
// tracker wraps the CPU allocator; CUDA tensors come from the CUDA caching allocator, which cannot
// be wrapped the same way, so memory on a device is attributed by the *active stage* instead:
//
//   Every MemoryScope (stage s, kind k) the executor opens is a segment. At a segment's start the
//   attributor samples the device's allocator (bytes allocated now) and resets its peak; at its
//   end (or when a nested scope opens) it samples again and charges
//     live[s][k]  += allocated_end − allocated_start          (what the segment kept, may be < 0)
//     peak[s][k]   = max(peak[s][k],  live[s][k]  + peak_in_segment − allocated_start)
//     peakTotal[s] = max(peakTotal[s], liveTotal[s] + peak_in_segment − allocated_start)
//     peakReserved[s] = max(peakReserved[s], the device's reserved-bytes peak in the segment)
//   A nested scope closes the outer segment and reopens it when it ends, so every byte moved
//   while a scope is innermost is charged to that scope's (stage, kind); scopes of stage −1
//   (instrumentation, evaluation) are charged to nobody.
//
// Why this is exact enough: on a device one action runs at a time (the serial driver; the
// threaded driver serialises the stages that share a device), so every allocation and free on
// the device between two samples belongs to the innermost scope of the one thread issuing work.
// Frees count for the stage that frees: a tensor handed from stage s to s+1 and freed by s+1's
// backward lowers s+1's activations (it was charged to s+1 when s+1 received it, so that
// balances). A tensor both stages use at once (a zero-copy hand-off on one GPU) is freed by
// whichever drops it last, maybe not the stage that allocated it: shareBuffer() tells the
// attributor, which moves that free onto the allocating stage's books. Reserved bytes are the device's, shared by all
// stages on it: per stage, the most the device held while that stage ran. Allocations outside any scope are not seen
// (nor on the CPU).
//
// Torch-free: the allocator's counters come through AllocatorStats (torch_devices.h), so the
// logic is tested on the CPU with fake counters; cuda_layer.cpp reads CUDACachingAllocator.

#include "runtime/train/model/memory_tracker.h"
#include "runtime/train/model/torch_devices.h"

#include <functional>
#include <mutex>
#include <vector>

namespace bs::runtime {

class DeviceMemoryAttributor
{
public:
    /// `stats` must outlive the attributor. `deviceOfStage[s]`: CUDA device of stage s, −1 = CPU
    /// (its scopes are left to the CPU tracker).
    DeviceMemoryAttributor(AllocatorStats& stats, std::vector<int> deviceOfStage);

    /// Called by MemoryScope on the thread that opens / closes it (installDeviceMemory()).
    void enter(int stage, MemoryCategory category);
    void leave();

    /// A buffer of `bytes` that stage `owner` allocated (charged to its `category`) and another
    /// stage on the same device now also holds (a zero-copy hand-off). The last holder frees it,
    /// inside one of its scopes; at the end of the first segment of that device after `alive()`
    /// turned false, the free is moved from the segment's (stage, kind) to the owner's. `alive`
    /// is called under the attributor's lock from the thread closing a segment: keep it a
    /// reference-count check.
    void shareBuffer(int owner, MemoryCategory category, std::int64_t bytes, std::function<bool()> alive);
    /// Buffers shareBuffer() still watches (tests).
    std::size_t sharedBuffers() const;

    /// The stage's memory on its device (all zero for CPU stages).
    StageMemory stage(int stage) const;
    /// Peaks back to the live values (as MemoryTracker::resetPeaks).
    void resetPeaks();
    int deviceOf(int stage) const;

private:
    struct Segment
    {
        int stage;
        MemoryCategory category;
        int device; // −1: not charged
        std::int64_t start;
    };
    void open(Segment& seg);
    void close(const Segment& seg);

    struct Shared
    {
        int owner;
        MemoryCategory category;
        int device;
        std::int64_t bytes;
        std::function<bool()> alive;
    };
    // With m_mutex held: moves the frees of shared buffers that died during `seg` to their owners.
    void settleShared(const Segment& seg);

    AllocatorStats& m_stats;
    std::vector<int> m_device;
    mutable std::mutex m_mutex;
    std::vector<StageMemory> m_memory;
    std::vector<Shared> m_shared;
};

/// Makes every MemoryScope of this process report to `attributor` (nullptr: none). The caller
/// keeps it alive while installed. One at a time per process (like the CPU tracker's counters).
void installDeviceMemory(DeviceMemoryAttributor* attributor);
DeviceMemoryAttributor* installedDeviceMemory();

} // namespace bs::runtime
