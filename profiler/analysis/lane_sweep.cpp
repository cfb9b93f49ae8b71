#include "profiler/analysis/lane_sweep.h"

#include <algorithm>

namespace bs::profiler::detail {

void Transfers::add(std::size_t lane, std::size_t mb, Interval transfer)
{
    const std::size_t key = lane * mbs + mb;
    Interval* first = &in[key * slots];
    if (count[key] < slots) {
        first[count[key]++] = transfer;
        return;
    }
    // More than the lane's chunks can receive (a hand-made or imported trace): keep the latest.
    *std::min_element(first, first + slots, [](const Interval& a, const Interval& b) { return a.start < b.start; })
        = transfer;
}

const Interval* Transfers::feeding(std::size_t lane, std::size_t mb, TimeNs start) const
{
    const std::size_t key = lane * mbs + mb;
    const Interval* best = nullptr;
    for (const Interval* t = &in[key * slots]; t != &in[key * slots] + count[key]; ++t) {
        if (t->start < start && (!best || t->start >= best->start)) {
            best = t;
        }
    }
    return best;
}

void LaneFacts::add(const TraceEvent& e, const BatchSegments& batches)
{
    if (m_count > 0 && e.start < m_lastStart) {
        m_sorted = false;
    }
    m_lastStart = e.start;
    ++m_count;
    if (e.kind != EventKind::Forward) {
        return;
    }
    m_lastForwardEnd = m_anyForward ? std::max(m_lastForwardEnd, e.end) : e.end;
    m_anyForward = true;
    const BatchSegments::Segment& seg = batches.segmentOf(e.microbatch);
    const int batch = seg.firstBatch + (e.microbatch - seg.firstMicrobatch) / seg.m;
    if (m_lastSpan == nullptr || batch != m_lastBatch) {
        auto [it, inserted] = m_forwardSpan.try_emplace(batch, Span{{e.start, e.end}, seg.synchronous});
        m_lastBatch = batch;
        m_lastSpan = &it->second;
        if (inserted) {
            return;
        }
    }
    m_lastSpan->forwards.start = std::min(m_lastSpan->forwards.start, e.start);
    m_lastSpan->forwards.end = std::max(m_lastSpan->forwards.end, e.end);
}

std::vector<Interval> LaneFacts::flushWindows() const
{
    std::vector<Interval> windows;
    for (auto it = m_forwardSpan.begin(); it != m_forwardSpan.end(); ++it) {
        auto next = std::next(it);
        if (next != m_forwardSpan.end() && it->second.synchronous) {
            windows.push_back({it->second.forwards.end, next->second.forwards.start});
        }
    }
    return windows;
}

void LeadLaneFacts::add(const TraceEvent& e, const BatchSegments& batches)
{
    if (firstBackwardEnd < 0 && isBackwardLike(e.kind)) {
        firstBackwardEnd = e.end;
    }
    if (e.kind != EventKind::Forward) {
        return;
    }
    ++forwards;
    maxMicrobatch = std::max(maxMicrobatch, e.microbatch);
    if (batches.startsBatch(e.microbatch)) {
        batchStart.try_emplace(batches.batchOf(e.microbatch), e.start);
    }
}

// The steady window starts at stage 0's first forward of the first global batch it begins after
// its own first backward (the pipeline is full from then on: batch 1 when m >= p) and ends at
// stage 0's first forward of the last batch. It spans whole batches, so for a flush schedule its
// bubble is exactly the per-batch bubble; the fill and the drain are excluded.
Interval LeadLaneFacts::steadyWindow(const BatchSegments& batches) const
{
    const int count = maxMicrobatch < 0 ? 0 : batches.batchOf(maxMicrobatch) + 1;
    if (count < 3 || firstBackwardEnd < 0 || !batchStart.count(count - 1)) {
        return {};
    }
    const TimeNs end = batchStart.at(count - 1);
    TimeNs start = end;
    for (const auto& [batch, t] : batchStart) {
        if (batch >= 1 && t >= firstBackwardEnd) {
            start = t;
            break;
        }
    }
    return end <= start ? Interval{} : Interval{start, end};
}

FirstPassState::FirstPassState(
    const AnalysisOptions& options, int laneCount, std::int32_t maxMicrobatch, int chunkCount)
    : batches(options)
    , memoryOptions(options)
    , lanes(std::max(0, laneCount))
    , chunks(std::max(1, chunkCount))
    , facts(static_cast<std::size_t>(lanes))
{
    transfers.mbs = static_cast<std::size_t>(std::max(0, maxMicrobatch)) + 1;
    transfers.slots = 2 * static_cast<std::size_t>(chunks); // an activation and a gradient per chunk
    const auto laneCountU = static_cast<std::size_t>(lanes);
    transfers.in.resize(laneCountU * transfers.mbs * transfers.slots);
    transfers.count.assign(laneCountU * transfers.mbs, std::uint8_t{0});
    slots.assign(laneCountU * slotsPerLane(), MemorySlot{});
    memory.reserve(laneCountU);
    for (int lane = 0; lane < lanes; ++lane) {
        memory.emplace_back(
            lane, memoryOptions, slots.data() + static_cast<std::size_t>(lane) * slotsPerLane(), chunks);
    }
}

LaneMemory& FirstPassState::restartMemory(std::size_t lane)
{
    MemorySlot* laneSlots = slots.data() + lane * slotsPerLane();
    std::fill(laneSlots, laneSlots + slotsPerLane(), MemorySlot{});
    memory[lane] = LaneMemory(static_cast<int>(lane), memoryOptions, laneSlots, chunks);
    return memory[lane];
}

LaneSweep::LaneSweep(int lane, const LaneFacts& facts, const SweepContext& context)
    : m_context(context)
    , m_flush(facts.flushWindows())
    , m_drainFrom(facts.drainFrom(context.t0))
{
    m_report.stage = lane;
    m_spans.reserve(facts.count() + 2); // one gap before each event and the drain; pieces may add more
    // Flush windows are disjoint and sorted by batch; when their ends are sorted too (always, for
    // a schedule that flushes), the first window that can overlap a gap only moves forward.
    m_flushEndsSorted = std::is_sorted(
        m_flush.begin(), m_flush.end(), [](const Interval& a, const Interval& b) { return a.end < b.end; });
}

void LaneSweep::emit(BubbleCause cause, TimeNs start, TimeNs end)
{
    // Every idle span goes through here: the report's totals and its bubbles agree by construction.
    if (end <= start) {
        return;
    }
    m_report.idleByCause[static_cast<std::size_t>(cause)] += end - start;
    m_spans.push_back({start, end, m_report.stage, cause});
}

void LaneSweep::add(const TraceEvent& e)
{
    if (!m_started) {
        m_started = true;
        emit(BubbleCause::WarmUp, m_context.t0, e.start);
        m_cursor = e.start;
        m_firstStart = e.start;
    }
    if (e.start > m_cursor) {
        attributeGap(m_cursor, e.start, e);
    }
    m_cursor = std::max(m_cursor, e.end);
    m_report.busy += e.duration();
    m_report.busyByKind[static_cast<std::size_t>(kindIndex(e.kind))] += e.duration();
    if (m_context.steady.end > m_context.steady.start) {
        m_steadyBusy += overlap(e.start, e.end, m_context.steady.start, m_context.steady.end);
    }
}

// Splits the gap [from, to) that ends when `next` starts into spans by cause, in priority order:
// a flush window (synchronous schedules), the stage's drain (after its last forward), the
// transfer of `next`'s input (comm), the rest (dependency). Adjacent pieces of one cause are
// merged and emitted in time order.
void LaneSweep::attributeGap(TimeNs from, TimeNs to, const TraceEvent& next)
{
    const Interval* transfer = nullptr;
    if (next.microbatch >= 0 && (next.kind == EventKind::Forward || isBackwardLike(next.kind))) {
        transfer = m_context.transfers->feeding(next.stage, static_cast<std::size_t>(next.microbatch), next.start);
    }
    const auto& flush = m_flush;
    // The first window that can overlap the gap is the first that ends after `from`.
    const auto endsBy = [](const Interval& w, TimeNs t) { return w.end <= t; };
    if (m_flushEndsSorted) {
        while (m_window < flush.size() && flush[m_window].end <= from) {
            ++m_window; // gaps come in time order: never back
        }
    } else {
        m_window = static_cast<std::size_t>(std::lower_bound(flush.begin(), flush.end(), from, endsBy) - flush.begin());
    }
    auto window = flush.begin() + static_cast<std::ptrdiff_t>(m_window);
    const TimeNs drainFrom = m_drainFrom;
    auto causeAt = [&](TimeNs t) {
        if (window != flush.end() && window->start <= t && t < window->end) {
            return BubbleCause::Flush;
        }
        if (t >= drainFrom) {
            return BubbleCause::Drain;
        }
        if (transfer && transfer->start <= t && t < transfer->end) {
            return BubbleCause::Comm;
        }
        return BubbleCause::Dependency;
    };
    // The cause changes only at these times.
    auto nextChange = [&](TimeNs t) {
        TimeNs change = to;
        auto consider = [&](TimeNs edge) {
            if (edge > t && edge < change) {
                change = edge;
            }
        };
        if (window != flush.end()) {
            consider(window->start);
            consider(window->end);
        }
        consider(drainFrom);
        if (transfer) {
            consider(transfer->start);
            consider(transfer->end);
        }
        return change;
    };
    TimeNs pieceStart = from;
    BubbleCause pieceCause = causeAt(from);
    for (TimeNs t = from; t < to;) {
        while (window != flush.end() && window->end <= t) {
            ++window;
        }
        const BubbleCause cause = causeAt(t);
        if (cause != pieceCause) {
            emit(pieceCause, pieceStart, t);
            pieceStart = t;
            pieceCause = cause;
        }
        t = nextChange(t);
    }
    emit(pieceCause, pieceStart, to);
}

StageReport LaneSweep::finish(TimeNs makespan, std::vector<BubbleSpan>& bubbles, const LaneMemory& memory)
{
    StageReport& st = m_report;
    if (!m_started) {
        emit(BubbleCause::WarmUp, m_context.t0, m_context.t1);
        st.idle = makespan;
        st.bubbleFraction = 1.0;
    } else {
        emit(BubbleCause::Drain, m_cursor, m_context.t1);
        st.span = m_cursor - m_firstStart;
        st.idle = makespan - st.busy;
        st.bubbleFraction = makespan > 0 ? static_cast<double>(st.idle) / static_cast<double>(makespan) : 0.0;
        memory.report(st, *m_context.options);
    }
    bubbles.insert(bubbles.end(), m_spans.begin(), m_spans.end());
    return st;
}

} // namespace bs::profiler::detail
