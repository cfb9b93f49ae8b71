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
// balances). Reserved bytes are the device's, shared by all stages on it: per stage, the most the
// device held while that stage ran. Allocations outside any scope are not seen (nor on the CPU).
//
// Torch-free: the allocator's counters come through AllocatorStats (torch_devices.h), so the
// logic is tested on the CPU with fake counters; cuda_layer.cpp reads CUDACachingAllocator.

#include "runtime/model/memory_tracker.h"
#include "runtime/model/torch_devices.h"

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

    AllocatorStats& m_stats;
    std::vector<int> m_device;
    mutable std::mutex m_mutex;
    std::vector<StageMemory> m_memory;
};

/// Makes every MemoryScope of this process report to `attributor` (nullptr: none). The caller
/// keeps it alive while installed. One at a time per process (like the CPU tracker's counters).
void installDeviceMemory(DeviceMemoryAttributor* attributor);
DeviceMemoryAttributor* installedDeviceMemory();

} // namespace bs::runtime
