#pragma once
// Per-stage memory measured from real allocations. A wrapper around LibTorch's CPU allocator
// (c10::SetCPUAllocator) records every tensor allocation under the (stage, category) set by the
// innermost MemoryScope on the allocating thread, and releases it under the same pair when the
// tensor's storage is freed. So the numbers are bytes that really were live, not a formula.
//
// Limits: only CPU tensor storage is seen (not BLAS/OpenMP scratch, not CUDA); allocations made
// by intra-op worker threads inside a parallel region are attributed to no stage; the counters
// are process-wide, so two training runs in one process share them (call reset() at run start).

#include "runtime/plan/schedule/limits.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace bs::runtime {

enum class MemoryCategory : std::uint8_t
{
    Parameters,
    Gradients,
    OptimizerState,
    Stash, ///< stashed weight versions (pipedream, 2bw)
    Activations, ///< everything allocated while a stage runs F/B/I/W: saved tensors, receive buffers, temporaries
    Other, ///< instrumentation (drift snapshots), evaluation
};
constexpr int kMemoryCategoryCount = 6;
std::string_view memoryCategoryName(MemoryCategory category);

/// One stage's measured memory in bytes.
struct StageMemory
{
    std::array<std::int64_t, kMemoryCategoryCount> live{}; ///< per category, now
    std::array<std::int64_t, kMemoryCategoryCount> peak{}; ///< per category, highest since reset
    std::int64_t liveTotal = 0;
    std::int64_t peakTotal = 0; ///< highest sum over the categories except Other
    std::int64_t peakReserved =
        0; ///< CUDA stages: the device's caching-allocator reserve while the stage ran (device_memory.h); 0 on the CPU

    std::int64_t liveOf(MemoryCategory c) const { return live[static_cast<std::size_t>(c)]; }
    std::int64_t peakOf(MemoryCategory c) const { return peak[static_cast<std::size_t>(c)]; }
};

class MemoryTracker
{
public:
    static constexpr int kMaxStages = limits::kMaxStages; ///< one slot per stage: the pipeline limit

    /// Installs the allocator wrapper once per process (idempotent, thread-safe).
    static void install();
    static bool installed();
    /// Zeroes the peaks of every stage (live bytes stay: tensors still alive are still counted),
    /// also those of the installed DeviceMemoryAttributor (CUDA stages).
    static void resetPeaks();
    static StageMemory stage(int stage);

    /// Multi-stage ranks (interleaved, V): rankOfStage[s] = the rank that holds stage s. From then
    /// on each rank's books are kept too: live bytes of all its stages together and the peak of that
    /// sum as it happened (not the sum of its stages' peaks, which need not coincide). Empty: none.
    /// Process-wide, like the rest; call it before the run's first allocation worth counting.
    static void setRanks(const std::vector<int>& rankOfStage);
    /// Rank r's books (setRanks); zeros for a rank it does not know.
    static StageMemory rank(int rank);
};

/// Sets the current thread's (stage, category) for allocations until destroyed; nests.
/// stage < 0 or ≥ kMaxStages: allocations are not attributed to any stage. Also reports to the
/// installed DeviceMemoryAttributor (device_memory.h), which charges CUDA memory the same way.
class MemoryScope
{
public:
    MemoryScope(int stage, MemoryCategory category);
    ~MemoryScope();
    MemoryScope(const MemoryScope&) = delete;
    MemoryScope& operator=(const MemoryScope&) = delete;

private:
    int m_prevStage;
    MemoryCategory m_prevCategory;
};

} // namespace bs::runtime
