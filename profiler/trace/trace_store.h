#pragma once
// Append-only event storage that millions of events fit in, with immutable snapshots that readers
// (analysis, the UI thread) hold while the writer keeps appending. Events live in fixed-size
// chunks that never move, so a snapshot is a list of chunk pointers plus a count: taking one is
// O(chunks), never a copy of the events.

#include "profiler/trace/trace_event.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace bs::profiler {

/// Facts about a trace that readers need to interpret it.
struct TraceMeta
{
    int stages = 0;
    std::string clock = "virtual"; ///< "virtual" (simulated/serial stage clocks) or "wall"
    std::string title;             ///< e.g. "paci a=8 p=8 m=8"
    std::map<std::string, std::string> attributes; ///< free-form: schedule, accum, weight policy...
    /// Model stages each lane (rank) holds, 1..kMaxStagesPerLane: interleaved and V placements
    /// hold several (the analysis keeps a slot per micro-batch and stage, the timeline shades
    /// each). A typed value: trace files carry it as otherData.stages_per_lane.
    int stagesPerLane = 1;
};

inline constexpr std::size_t kTraceChunkSize = 1u << 18; // events per chunk (10 MiB)
inline constexpr std::size_t kTraceChunkBytes = kTraceChunkSize * sizeof(TraceEvent);

/// Fixed storage for kTraceChunkSize events. The storage is left untouched, so the OS maps its
/// pages only as events are appended: a small run (the simulator under a slider) does not pay for
/// zeroing 10 MiB it never uses.
struct TraceChunk
{
    TraceChunk();
    ~TraceChunk();
    TraceChunk(const TraceChunk&) = delete;
    TraceChunk& operator=(const TraceChunk&) = delete;

    TraceEvent* events() { return std::launder(reinterpret_cast<TraceEvent*>(m_storage)); }
    const TraceEvent* events() const { return std::launder(reinterpret_cast<const TraceEvent*>(m_storage)); }

private:
    std::byte* m_storage;
};
static_assert(std::is_trivially_destructible_v<TraceEvent>, "chunks never run event destructors");

/// The largest lane and micro-batch id over a trace's events, kept as they are appended, so a
/// reader that sizes tables by them (analysis) need not walk the events first.
struct TraceExtent
{
    int maxStage = -1;                                   ///< -1: no events
    std::int32_t maxMicrobatch = std::numeric_limits<std::int32_t>::min(); ///< over every event

    void add(const TraceEvent& e)
    {
        maxStage = std::max<int>(maxStage, e.stage);
        maxMicrobatch = std::max(maxMicrobatch, e.microbatch);
    }
};

/// An immutable view of the first size() events appended so far. Cheap to copy; thread-safe to read.
class TraceSnapshot
{
public:
    TraceSnapshot() = default;
    /// `extent` of the first `size` events; computed from them when not given.
    TraceSnapshot(TraceMeta meta, std::vector<std::shared_ptr<const TraceChunk>> chunks, std::size_t size,
        std::optional<TraceExtent> extent = std::nullopt);

    const TraceMeta& meta() const { return m_meta; }
    std::size_t size() const { return m_size; }
    const TraceExtent& extent() const { return m_extent; }
    bool empty() const { return m_size == 0; }
    const TraceEvent& operator[](std::size_t i) const
    {
        return m_chunks[i / kTraceChunkSize]->events()[i % kTraceChunkSize];
    }

    /// Calls f(event) for every event in append order.
    template<typename F>
    void forEach(F&& f) const
    {
        // Chunk by chunk: a plain loop over contiguous events, no index arithmetic per event.
        for (std::size_t c = 0, left = m_size; left > 0; ++c) {
            const TraceEvent* events = m_chunks[c]->events();
            const std::size_t n = left < kTraceChunkSize ? left : kTraceChunkSize;
            for (std::size_t i = 0; i < n; ++i) {
                f(events[i]);
            }
            left -= n;
        }
    }

    /// Calls f(event) for the events [from, to) (to <= size()) in append order.
    template<typename F>
    void forEachIn(std::size_t from, std::size_t to, F&& f) const
    {
        while (from < to) {
            const TraceEvent* events = m_chunks[from / kTraceChunkSize]->events();
            const std::size_t first = from % kTraceChunkSize;
            const std::size_t n = std::min(to - from, kTraceChunkSize - first);
            for (std::size_t i = first; i < first + n; ++i) {
                f(events[i]);
            }
            from += n;
        }
    }

    /// Latest end time over all events (0 when empty).
    TimeNs endTime() const;
    std::vector<TraceEvent> toVector() const;

private:
    TraceMeta m_meta;
    std::vector<std::shared_ptr<const TraceChunk>> m_chunks;
    std::size_t m_size = 0;
    TraceExtent m_extent;
};

/// Thread-safe: one or more writers append, any thread takes snapshots.
class TraceStore
{
public:
    explicit TraceStore(TraceMeta meta = {});

    void append(const TraceEvent& event);
    void append(const TraceEvent* events, std::size_t count);
    /// For one writer that appends in batches (the serial scheduler core): where the next events
    /// go, written in place (no staging copy), and how many fit there (>= 1: the rest of the last
    /// chunk, or a new one). They exist for readers once commit() publishes them. Nothing else may
    /// append between the two calls.
    TraceEvent* appendSpace(std::size_t& room);
    /// Publishes the first `count` events written from the last appendSpace() (count <= room).
    void commit(std::size_t count);
    /// Replaces the metadata (e.g. once the run knows its stage count).
    void setMeta(TraceMeta meta);
    std::size_t size() const;
    std::shared_ptr<const TraceSnapshot> snapshot() const;
    /// Drops every event; snapshots already taken stay valid.
    void clear();

private:
    void appendLocked(const TraceEvent& event);

    mutable std::mutex m_mutex;
    TraceMeta m_meta;
    // Chunks are shared with snapshots: a snapshot only reads indices below its own size, and the
    // writer only writes at or above the store's size, so the two never touch the same event.
    std::vector<std::shared_ptr<TraceChunk>> m_chunks;
    std::size_t m_size = 0;
    TraceExtent m_extent; // of the m_size events
};

/// Builds a snapshot from a plain vector (tests, importers).
std::shared_ptr<const TraceSnapshot> makeSnapshot(TraceMeta meta, const std::vector<TraceEvent>& events);

} // namespace bs::profiler
