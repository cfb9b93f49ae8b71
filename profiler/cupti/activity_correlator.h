#pragma once
// Turns neutral activity records into trace events: joins each GPU record to the action tag that
// was pushed when it was launched (EXTERNAL_CORRELATION records map CUPTI correlation ids to our
// 64-bit tags), converts its GPU timestamps to the trace's host clock and counts what it could not
// place. Pure: no CUPTI calls, so it is tested on hand-made records.
//
// Mapping (documented choice):
// - kernels and memsets      -> Lane::Kernel, EventKind::Kernel, aux = the launching action's
//                               EventKind (as an integer); bytes = memset size.
// - memcpys under a Send tag -> Lane::Comm, EventKind::Send, aux = destination stage (the tag's
//                               version field), bytes = copy size: the analysis reads these as
//                               transfers, exactly like the simulator's Send events.
// - other memcpys            -> Lane::Kernel, EventKind::Kernel (a copy that occupies the stage's
//                               stream inside a compute action, e.g. host-to-device input).
// - synchronization records  -> counted (host waits), not drawn.
// - API records (RUNTIME/DRIVER) -> counted. They must be enabled: CUPTI writes an external
//                               correlation record only in front of an API record
//                               (cuptiActivityPushExternalCorrelationId in cupti_activity.h).
//
// Which stage a GPU record belongs to: its (device, stream) when the runtime bound that stream to
// a stage (bindStream: every stage works on its own CUDA stream, and autograd runs each backward
// op on its forward op's stream, so the stream names the stage whichever host thread launched the
// work); else the tag's stage. The tag (per host thread in CUPTI: kernels that autograd's device
// thread launches carry none) names the action and is checked against the stream: a tag whose
// stage differs from its stream's is counted (tagMismatches) and not used. Which action of the
// stage an untagged record belongs to is for the caller to find from the actions' time windows
// (runtime/train/exec/gpu_trace.h).
// A record whose external correlation has not arrived yet waits (CUPTI may deliver the mapping
// in a later buffer) for up to kMaxWait further buffers; after that, and at finish(), it is placed
// by its bound stream, else by the stage last seen on its stream, marked untagged (aux = kUntagged,
// microbatch −1), or counted as unattributed when its stream is neither bound nor seen under a tag.

#include "profiler/cupti/action_tag.h"
#include "profiler/cupti/activity_record.h"
#include "profiler/cupti/clock_sync.h"
#include "profiler/trace/trace_event.h"

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace bs::profiler::cupti {

/// aux value of a kernel event whose launching action is unknown.
inline constexpr std::uint16_t kUntagged = 0xFFFF;

struct CorrelatorStats
{
    std::uint64_t records = 0;
    std::uint64_t kernels = 0;
    std::uint64_t memcpys = 0;
    std::uint64_t memsets = 0;
    std::uint64_t synchronizations = 0;
    std::uint64_t externalCorrelations = 0;
    std::uint64_t foreignCorrelations = 0; ///< external ids of another kind or not ours (ignored)
    std::uint64_t untagged = 0;            ///< placed by stream only (no tag arrived)
    std::uint64_t unattributed = 0;        ///< no tag and unknown stream: not in the trace
    std::uint64_t droppedRecords = 0;      ///< reported by CUPTI (buffer full): a gap in the trace
    std::uint64_t unparsedBytes = 0;       ///< bytes of records the parser could not read
    std::uint64_t apiRecords = 0; ///< RUNTIME/DRIVER records (the calls the tags precede)
    std::uint64_t peerCopies = 0; ///< MEMCPY2 records (peer-to-peer copies), also in memcpys
    std::uint64_t incompleteRecords = 0; ///< GPU records without timestamps (forced flush): left out
    std::uint64_t unknownRecords = 0; ///< kinds the parser stepped over
    std::uint64_t tagMismatches = 0; ///< tagged on one stage, run on another stage's stream
};

class ActivityCorrelator
{
public:
    /// origin: host steady-clock ns that is time 0 of the trace.
    ActivityCorrelator(ClockSync clock, TimeNs origin, std::uint32_t externalKind);

    void setClock(const ClockSync& clock) { m_clock = clock; }
    const ClockSync& clock() const { return m_clock; }

    /// Consumes records (one completed buffer, in buffer order) and appends the events it can
    /// place to `out`.
    void consume(std::span<const ActivityRecord> records, std::vector<TraceEvent>& out);
    /// Places the records still waiting for a tag (end of the run).
    void finish(std::vector<TraceEvent>& out);

    /// GPU work on (device, stream) (CUPTI's ids) is stage `stage`'s, whatever its tag says.
    void bindStream(std::uint32_t deviceId, std::uint32_t streamId, int stage);

    void addDropped(std::uint64_t count) { m_stats.droppedRecords += count; }
    void addParsed(std::uint64_t incomplete, std::uint64_t unknown)
    {
        m_stats.incompleteRecords += incomplete;
        m_stats.unknownRecords += unknown;
    }
    void addUnparsed(std::uint64_t bytes) { m_stats.unparsedBytes += bytes; }
    std::size_t pending() const { return m_pending.size(); }
    const CorrelatorStats& stats() const { return m_stats; }

private:
    void place(const ActivityRecord& r, const ActionTag& tag, std::vector<TraceEvent>& out);
    void placeUntagged(const ActivityRecord& r, std::vector<TraceEvent>& out);
    void evictOldTags();
    static std::uint64_t streamKey(std::uint32_t device, std::uint32_t stream)
    {
        return (static_cast<std::uint64_t>(device) << 32) | stream;
    }
    /// The stage bound to r's (device, stream), or -1.
    int boundStage(const ActivityRecord& r) const;

    struct Pending
    {
        ActivityRecord record;
        int age = 0; ///< buffers consumed since it arrived
    };
    static constexpr int kMaxWait = 2;

    static constexpr std::size_t kTagWindow = std::size_t{1} << 20;

    ClockSync m_clock;
    TimeNs m_origin = 0;
    std::uint32_t m_externalKind = 0;
    std::unordered_map<std::uint32_t, ActionTag> m_tags;         // correlation id -> tag
    std::unordered_map<std::uint64_t, std::uint16_t> m_streamStage; // (device, stream) -> last tagged stage
    std::unordered_map<std::uint64_t, std::uint16_t> m_boundStage; // (device, stream) -> its stage (bindStream)
    std::uint32_t m_maxCorrelation = 0;
    std::vector<Pending> m_pending;
    CorrelatorStats m_stats;
};

} // namespace bs::profiler::cupti
