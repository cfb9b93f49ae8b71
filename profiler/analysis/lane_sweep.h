#pragma once
// Internal to analysis: what analyze() learns about one lane (one stage's compute row) in its two
// passes over the trace. Both take the lane's events one at a time, in start order, and keep only
// running state, so analyze() feeds every lane from one sequential walk of the trace. A walk per
// lane (the earlier design) reads the whole trace once per lane: at millions of events that is
// the trace from main memory p times per pass, and the time per event grew ~3x from 10^5 to 10^7.

#include "profiler/analysis/batch_segments.h"
#include "profiler/analysis/lane_memory.h"
#include "profiler/analysis/report.h"

#include <algorithm>
#include <map>
#include <vector>

namespace bs::profiler::detail {

struct Interval
{
    TimeNs start = 0, end = 0;
};

inline bool isBackwardLike(EventKind k)
{
    return k == EventKind::Backward || k == EventKind::BackwardInput;
}

/// F, B, I, W, U → 0..4; -1 for events that are not stage work (they are not analysed).
inline int kindIndex(EventKind k)
{
    switch (k) {
    case EventKind::Forward:
        return 0;
    case EventKind::Backward:
        return 1;
    case EventKind::BackwardInput:
        return 2;
    case EventKind::BackwardWeight:
        return 3;
    case EventKind::Update:
        return 4;
    default:
        return -1;
    }
}

/// Whether `e` is stage work the analysis counts (a compute-lane F, B, I, W or U); both walks ask.
inline bool isAnalysed(const TraceEvent& e)
{
    return e.isCompute() && kindIndex(e.kind) >= 0;
}

inline TimeNs overlap(TimeNs a0, TimeNs a1, TimeNs b0, TimeNs b1)
{
    return std::max<TimeNs>(0, std::min(a1, b1) - std::max(a0, b0));
}

/// Transfers into each lane, by micro-batch: up to `slots` per (lane, micro-batch) in trace order,
/// an activation and a gradient for each chunk the lane holds (2v). A send names only its
/// destination rank, and on a loop or V placement an activation can come from a higher rank, so
/// neither direction nor chunk is read from it: the transfer that feeds an action is the one into
/// its (lane, micro-batch) that started last before it (a later input of the same micro-batch on
/// the same rank depends on that rank's earlier action). Keyed by (rank, micro-batch) alone, a
/// rank's two chunks overwrote each other's entry. Dense arrays: this runs under a slider.
struct Transfers
{
    std::size_t mbs = 1;
    std::size_t slots = 2;
    std::vector<Interval> in; ///< [(lane · mbs + mb) · slots + k]; only count[] of them written
    std::vector<std::uint8_t> count; ///< [lane · mbs + mb]: slots in use

    void add(std::size_t lane, std::size_t mb, Interval transfer);
    /// The transfer into (lane, mb) that started last before `start`; nullptr when none did.
    const Interval* feeding(std::size_t lane, std::size_t mb, TimeNs start) const;
};

/// Pass 1: what needs all of a lane's events before its first gap can be attributed.
class LaneFacts
{
public:
    /// `e` is this lane's next compute event in trace order.
    void add(const TraceEvent& e, const BatchSegments& batches);

    std::size_t count() const { return m_count; }
    /// Whether the trace holds this lane's events in start order (producers append them so;
    /// pass 2 sorts the lanes that are not).
    bool sorted() const { return m_sorted; }
    /// From the lane's last forward of batch n to its first forward of n + 1, for every batch n
    /// that flushes, in batch order.
    std::vector<Interval> flushWindows() const;
    /// The drain starts at the lane's last forward end (t0 when it has none, or it is earlier).
    TimeNs drainFrom(TimeNs t0) const { return m_anyForward ? std::max(t0, m_lastForwardEnd) : t0; }

private:
    struct Span
    {
        Interval forwards; ///< [first F start, last F end]
        bool synchronous = true;
    };
    std::size_t m_count = 0;
    bool m_sorted = true;
    TimeNs m_lastStart = 0;
    bool m_anyForward = false;
    TimeNs m_lastForwardEnd = 0;
    std::map<int, Span> m_forwardSpan; // batch -> its forwards on this lane
    int m_lastBatch = 0; // events come batch by batch: skip the lookup
    Span* m_lastSpan = nullptr;
};

/// Stage 0's facts that bound the steady window: its forwards and the first start of each batch.
struct LeadLaneFacts
{
    int forwards = 0;
    int maxMicrobatch = -1;
    TimeNs firstBackwardEnd = -1;
    std::map<int, TimeNs> batchStart; // batch -> stage 0's first forward start

    /// `e` is stage 0's next compute event in start order.
    void add(const TraceEvent& e, const BatchSegments& batches);
    /// The steady window (see Report::steadyStart), or nullopt-like {0, 0} when there is none.
    Interval steadyWindow(const BatchSegments& batches) const;
};

/// Pass 1, every lane at once: what the second walk needs from the whole trace.
struct FirstPassState
{
    FirstPassState(const AnalysisOptions& options, int lanes, std::int32_t maxMicrobatch, int chunks);

    /// `e` is the trace's next event in append order.
    void add(const TraceEvent& e)
    {
        if (isAnalysed(e)) {
            if (!fitsSlots(e)) {
                return;
            }
            t0 = any ? std::min(t0, e.start) : e.start;
            t1 = any ? std::max(t1, e.end) : e.end;
            any = true;
            facts[e.stage].add(e, batches);
            if (e.stage == 0) {
                lead.add(e, batches);
            }
            if (facts[e.stage].sorted()) {
                memory[e.stage].add(e); // a lane found out of start order is tracked again in pass 2
            }
            return;
        }
        if (e.kind == EventKind::Send && e.microbatch >= 0 && e.aux < lanes
            && static_cast<std::size_t>(e.microbatch) < transfers.mbs) {
            transfers.add(e.aux, static_cast<std::size_t>(e.microbatch), {e.start, e.end});
        }
    }
    /// Tracks `lane`'s memory and lag afresh, over zeroed slots (pass 2, for a lane found out of
    /// start order: what add() tracked of it is discarded).
    LaneMemory& restartMemory(std::size_t lane);

    BatchSegments batches; ///< of the options it was made for
    MemoryOptions memoryOptions; ///< likewise
    int lanes = 0;
    int chunks = 1;
    Transfers transfers;
    std::vector<LaneFacts> facts;
    std::vector<MemorySlot> slots; ///< lanes × transfers.mbs × chunks, lane by lane
    std::vector<LaneMemory> memory; ///< per lane, valid while its LaneFacts is sorted()
    std::size_t slotsPerLane() const { return transfers.mbs * static_cast<std::size_t>(chunks); }
    LeadLaneFacts lead; ///< valid if lane 0 is in start order
    TimeNs t0 = 0, t1 = 0;
    bool any = false;

private:
    // Whether stage work `e` has a lane and a memory slot (an update's micro-batch is its index,
    // which has no slot).
    bool fitsSlots(const TraceEvent& e) const
    {
        return e.stage < lanes
            && (e.kind == EventKind::Update || e.microbatch < 0
                || static_cast<std::size_t>(e.microbatch) < transfers.mbs);
    }
};

/// What every lane's sweep shares.
struct SweepContext
{
    const AnalysisOptions* options = nullptr;
    const Transfers* transfers = nullptr;
    TimeNs t0 = 0, t1 = 0;
    Interval steady; ///< empty (start == end) when there is no steady window
};

/// Pass 2: attributes a lane's gaps (its memory and lag are LaneMemory's, tracked in pass 1).
class LaneSweep
{
public:
    LaneSweep(int lane, const LaneFacts& facts, const SweepContext& context);

    /// `e` is the lane's next compute event in start order.
    void add(const TraceEvent& e);
    /// The lane's report, with `memory`'s figures (the lane's, over the same events); its idle
    /// spans are appended to `bubbles` in time order.
    StageReport finish(TimeNs makespan, std::vector<BubbleSpan>& bubbles, const LaneMemory& memory);
    /// Idle spans so far (finish() adds at most one).
    std::size_t spanCount() const { return m_spans.size(); }
    /// Busy time inside the steady window.
    TimeNs steadyBusy() const { return m_steadyBusy; }

private:
    void emit(BubbleCause cause, TimeNs start, TimeNs end);
    void attributeGap(TimeNs from, TimeNs to, const TraceEvent& next);

    const SweepContext& m_context;
    StageReport m_report;
    std::vector<BubbleSpan> m_spans; // the spans emit() adds to
    std::vector<Interval> m_flush;
    bool m_flushEndsSorted = true;
    std::size_t m_window = 0; // first flush window that can still overlap a gap
    TimeNs m_drainFrom = 0;
    bool m_started = false;
    TimeNs m_firstStart = 0;
    TimeNs m_cursor = 0;
    TimeNs m_steadyBusy = 0;
};

} // namespace bs::profiler::detail
