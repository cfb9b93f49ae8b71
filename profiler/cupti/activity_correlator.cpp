#include "profiler/cupti/activity_correlator.h"

#include <algorithm>

namespace bs::profiler::cupti {

ActivityCorrelator::ActivityCorrelator(ClockSync clock, TimeNs origin, std::uint32_t externalKind)
    : m_clock(clock)
    , m_origin(origin)
    , m_externalKind(externalKind)
{
}

void ActivityCorrelator::consume(std::span<const ActivityRecord> records, std::vector<TraceEvent>& out)
{
    bool newTags = false;
    for (const auto& r : records) {
        ++m_stats.records;
        switch (r.kind) {
        case RecordKind::ExternalCorrelation: {
            ++m_stats.externalCorrelations;
            const auto tag = unpackTag(r.externalId);
            if (r.externalKind != m_externalKind || !tag) {
                ++m_stats.foreignCorrelations;
                break;
            }
            m_tags[r.correlationId] = *tag;
            m_maxCorrelation = std::max(m_maxCorrelation, r.correlationId);
            newTags = true;
            evictOldTags();
            break;
        }
        case RecordKind::Synchronization: ++m_stats.synchronizations; break;
        case RecordKind::Api:
            ++m_stats.apiRecords;
            break;
        case RecordKind::Kernel:
        case RecordKind::Memcpy:
        case RecordKind::Memset: {
            ++(r.kind == RecordKind::Kernel ? m_stats.kernels : r.kind == RecordKind::Memcpy ? m_stats.memcpys : m_stats.memsets);
            m_stats.peerCopies += r.peerToPeer ? 1 : 0;
            if (incompleteGpuRecord(r)) { // the parser leaves these out; records made elsewhere too
                ++m_stats.incompleteRecords;
                break;
            }
            const auto it = m_tags.find(r.correlationId);
            if (it == m_tags.end()) {
                m_pending.push_back({r, 0});
            } else {
                place(r, it->second, out);
            }
            break;
        }
        }
    }
    // Waiting records: placed when their tag has arrived, or by stream once they have waited
    // kMaxWait buffers (launches outside any pushed tag never get one; the live view must not
    // hold them back until the end of the run).
    std::erase_if(m_pending, [&](Pending& p) {
        const auto it = newTags ? m_tags.find(p.record.correlationId) : m_tags.end();
        if (it != m_tags.end()) {
            place(p.record, it->second, out);
            return true;
        }
        if (++p.age > kMaxWait) {
            placeUntagged(p.record, out);
            return true;
        }
        return false;
    });
}

void ActivityCorrelator::finish(std::vector<TraceEvent>& out)
{
    for (const auto& p : m_pending) {
        placeUntagged(p.record, out);
    }
    m_pending.clear();
}

void ActivityCorrelator::bindStream(std::uint32_t deviceId, std::uint32_t streamId, int stage)
{
    if (stage >= 0 && stage <= kMaxStage) {
        m_boundStage[streamKey(deviceId, streamId)] = static_cast<std::uint16_t>(stage);
    }
}

int ActivityCorrelator::boundStage(const ActivityRecord& r) const
{
    const auto it = m_boundStage.find(streamKey(r.deviceId, r.streamId));
    return it == m_boundStage.end() ? -1 : it->second;
}

void ActivityCorrelator::placeUntagged(const ActivityRecord& r, std::vector<TraceEvent>& out)
{
    int stage = boundStage(r);
    if (stage < 0) {
        const auto stream = m_streamStage.find(streamKey(r.deviceId, r.streamId));
        if (stream == m_streamStage.end()) {
            ++m_stats.unattributed;
            return;
        }
        stage = stream->second;
    }
    ++m_stats.untagged;
    TraceEvent e;
    e.start = m_clock.toHost(r.start) - m_origin;
    e.end = std::max(e.start, m_clock.toHost(r.end) - m_origin);
    e.bytes = static_cast<std::int64_t>(r.bytes);
    e.stage = static_cast<std::uint16_t>(stage);
    e.kind = EventKind::Kernel;
    e.lane = Lane::Kernel;
    e.aux = kUntagged;
    out.push_back(e);
}

void ActivityCorrelator::evictOldTags()
{
    // A tag stays while records may still refer to it (a graph launch has many records under one
    // correlation id). CUPTI correlation ids increase, so ids far behind the newest are done.
    if (m_tags.size() <= kTagWindow) {
        return;
    }
    std::erase_if(m_tags, [&](const auto& entry) { return entry.first + kTagWindow / 2 < m_maxCorrelation; });
}

void ActivityCorrelator::place(const ActivityRecord& r, const ActionTag& tag, std::vector<TraceEvent>& out)
{
    const int bound = boundStage(r);
    const bool sendCopy = r.kind == RecordKind::Memcpy && tag.kind == EventKind::Send;
    if (bound >= 0 && bound != tag.stage && !sendCopy) {
        // The stream says another stage: the tag is another thread's (or a stale) one. The
        // stream wins; the caller finds the action from the stage's time windows.
        ++m_stats.tagMismatches;
        placeUntagged(r, out);
        return;
    }
    TraceEvent e;
    e.start = m_clock.toHost(r.start) - m_origin;
    e.end = std::max(e.start, m_clock.toHost(r.end) - m_origin);
    e.bytes = static_cast<std::int64_t>(r.bytes);
    e.microbatch = tag.microbatch;
    e.stage = static_cast<std::uint16_t>(tag.stage);
    if (r.kind == RecordKind::Memcpy && tag.kind == EventKind::Send) {
        e.kind = EventKind::Send;
        e.lane = Lane::Comm;
        e.aux = static_cast<std::uint16_t>(tag.version); // destination stage
    } else {
        e.kind = EventKind::Kernel;
        e.lane = Lane::Kernel;
        e.version = tag.version;
        e.aux = static_cast<std::uint16_t>(tag.kind);
        m_streamStage[streamKey(r.deviceId, r.streamId)] = e.stage;
    }
    out.push_back(e);
}

} // namespace bs::profiler::cupti
