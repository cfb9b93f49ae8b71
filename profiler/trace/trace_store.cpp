#include "profiler/trace/trace_store.h"

#include <algorithm>
#include <memory>

namespace bs::profiler {

TraceChunk::TraceChunk()
    : m_storage(new std::byte[kTraceChunkBytes]) // default-initialised: not zeroed
{}

TraceChunk::~TraceChunk()
{
    delete[] m_storage;
}

TraceSnapshot::TraceSnapshot(TraceMeta meta, std::vector<std::shared_ptr<const TraceChunk>> chunks, std::size_t size,
                             std::optional<TraceExtent> extent)
    : m_meta(std::move(meta))
    , m_chunks(std::move(chunks))
    , m_size(size)
{
    if (extent) {
        m_extent = *extent;
    } else {
        forEach([&](const TraceEvent& e) { m_extent.add(e); });
    }
}

TimeNs TraceSnapshot::endTime() const
{
    TimeNs end = 0;
    forEach([&](const TraceEvent& e) { end = std::max(end, e.end); });
    return end;
}

std::vector<TraceEvent> TraceSnapshot::toVector() const
{
    std::vector<TraceEvent> out;
    out.reserve(m_size);
    forEach([&](const TraceEvent& e) { out.push_back(e); });
    return out;
}

TraceStore::TraceStore(TraceMeta meta)
    : m_meta(std::move(meta))
{
}

void TraceStore::appendLocked(const TraceEvent& event)
{
    const std::size_t slot = m_size % kTraceChunkSize;
    if (slot == 0 && m_size / kTraceChunkSize == m_chunks.size()) {
        m_chunks.push_back(std::make_shared<TraceChunk>());
    }
    ::new (m_chunks[m_size / kTraceChunkSize]->events() + slot) TraceEvent(event);
    ++m_size;
    m_extent.add(event);
}

void TraceStore::append(const TraceEvent& event)
{
    std::lock_guard lock(m_mutex);
    appendLocked(event);
}

void TraceStore::append(const TraceEvent* events, std::size_t count)
{
    std::lock_guard lock(m_mutex);
    while (count > 0) { // chunk by chunk: one copy per run of events that fits
        const std::size_t slot = m_size % kTraceChunkSize;
        if (slot == 0 && m_size / kTraceChunkSize == m_chunks.size()) {
            m_chunks.push_back(std::make_shared<TraceChunk>());
        }
        const std::size_t n = std::min(count, kTraceChunkSize - slot);
        std::uninitialized_copy_n(events, n, m_chunks[m_size / kTraceChunkSize]->events() + slot);
        for (std::size_t i = 0; i < n; ++i) {
            m_extent.add(events[i]);
        }
        m_size += n;
        events += n;
        count -= n;
    }
}

TraceEvent* TraceStore::appendSpace(std::size_t& room)
{
    std::lock_guard lock(m_mutex);
    const std::size_t slot = m_size % kTraceChunkSize;
    if (slot == 0 && m_size / kTraceChunkSize == m_chunks.size()) {
        m_chunks.push_back(std::make_shared<TraceChunk>());
    }
    room = kTraceChunkSize - slot;
    // Past m_size: no snapshot reads there (see m_chunks), so the writer needs no lock to fill it.
    return m_chunks[m_size / kTraceChunkSize]->events() + slot;
}

void TraceStore::commit(std::size_t count)
{
    std::lock_guard lock(m_mutex);
    // Just written, so still in cache: the extent costs two comparisons an event here.
    const TraceEvent* events = m_chunks[m_size / kTraceChunkSize]->events() + m_size % kTraceChunkSize;
    for (std::size_t i = 0; i < count; ++i) {
        m_extent.add(events[i]);
    }
    m_size += count;
}

void TraceStore::setMeta(TraceMeta meta)
{
    std::lock_guard lock(m_mutex);
    m_meta = std::move(meta);
}

std::size_t TraceStore::size() const
{
    std::lock_guard lock(m_mutex);
    return m_size;
}

std::shared_ptr<const TraceSnapshot> TraceStore::snapshot() const
{
    std::lock_guard lock(m_mutex);
    std::vector<std::shared_ptr<const TraceChunk>> chunks(m_chunks.begin(), m_chunks.end());
    return std::make_shared<const TraceSnapshot>(m_meta, std::move(chunks), m_size, m_extent);
}

void TraceStore::clear()
{
    std::lock_guard lock(m_mutex);
    m_chunks.clear(); // snapshots keep their own references to the old chunks
    m_size = 0;
    m_extent = {};
}

std::shared_ptr<const TraceSnapshot> makeSnapshot(TraceMeta meta, const std::vector<TraceEvent>& events)
{
    TraceStore store(std::move(meta));
    store.append(events.data(), events.size());
    return store.snapshot();
}

} // namespace bs::profiler
