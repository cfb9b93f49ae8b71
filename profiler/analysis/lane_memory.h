#pragma once
// Internal to analysis: one lane's in-flight micro-batches, activation memory, weight versions and
// version lag, from its events in start order. None of it depends on facts of the whole trace, so
// the first walk tracks it for every lane it sees in start order, and the second walk is left the
// gaps.

#include "base/flat_count_map.h"
#include "profiler/analysis/report.h"

#include <cstdint>
#include <vector>

namespace bs::profiler::detail {

/// Memory and lag of one (micro-batch, chunk) on one lane.
struct MemorySlot
{
    std::int64_t heldBytes = 0; ///< activation bytes still held
    int forwardVersion = -1; ///< version its forward saw; -1 = none
};

/// What the memory figures depend on of the options: two analyses agree on them when these agree.
struct MemoryOptions
{
    bool stashesWeights = false;
    std::vector<std::int64_t> activationBytes;
    explicit MemoryOptions(const AnalysisOptions& options)
        : stashesWeights(options.stashesWeights)
        , activationBytes(options.activationBytes)
    {}
    friend bool operator==(const MemoryOptions&, const MemoryOptions&) = default;
};

class LaneMemory
{
public:
    /// `slots`: this lane's (micro-batch, chunk) slots, zeroed (MemorySlot{}), `chunks` a micro-batch.
    LaneMemory(int lane, const MemoryOptions& options, MemorySlot* slots, int chunks);

    /// `e` is the lane's next compute event in start order; an F, B, I or W names a micro-batch
    /// the slots have room for.
    void add(const TraceEvent& e);
    /// The lane's peaks, lag histogram and peak memory into `st` (for a lane with events).
    void report(StageReport& st, const AnalysisOptions& options) const;

private:
    void trackVersions();

    bool m_stashes;
    int m_chunks;
    std::int64_t m_unitBytes;
    MemorySlot* m_slots;
    FlatCountMap m_liveVersions; // stashed version -> micro-batches using it
    std::vector<int> m_lagCounts;
    int m_maxLagIndex = -1;
    int m_inflight = 0, m_current = 0;
    int m_peakInflight = 0, m_maxVersionLag = 0, m_peakWeightVersions = 1;
    std::int64_t m_activation = 0, m_peakActivation = 0;
};

} // namespace bs::profiler::detail
