// Pass 2's leap (periodic_leap.h): each lane's sweep takes the copies in one step once its
// state repeats and everything it reads of the whole trace (the transfers, its flush windows, its
// drain, the steady window) is periodic over them.

#include "profiler/analysis/periodic_leap.h"
#include "profiler/trace/trace_store.h"

#include <array>

namespace bs::profiler::detail {

struct PeriodicLeap::SweepWalk
{
    const TraceSnapshot& trace;
    const LeapPlan& plan;
    const Transfers& transfers;
    std::vector<LaneSweep>& sweeps;
    std::size_t at = 0;

    struct LaneMark
    {
        bool started = false;
        std::size_t spans = 0;
        TimeNs busy = 0, steadyBusy = 0, cursor = 0;
        std::array<TimeNs, 5> busyByKind{};
        std::array<TimeNs, kBubbleCauseCount> idleByCause{};
        std::size_t window = 0;
    };

    TimeNs shift() const { return plan.repeat.shift; }
    int step() const { return plan.repeat.microbatches; }

    void walkTo(std::size_t to)
    {
        trace.forEachIn(at, to, [&](const TraceEvent& e) {
            if (isAnalysed(e)) {
                sweeps[e.stage].add(e);
            }
        });
        at = to;
    }

    std::vector<LaneMark> marks() const
    {
        std::vector<LaneMark> out;
        out.reserve(sweeps.size());
        for (const LaneSweep& sweep : sweeps) {
            out.push_back({sweep.m_started, sweep.m_spans.size(), sweep.m_report.busy, sweep.m_steadyBusy,
                sweep.m_cursor, sweep.m_report.busyByKind, sweep.m_report.idleByCause, sweep.m_window});
        }
        return out;
    }

    // At most `most` copies from copy a + 1 on whose work lies inside the steady window or wholly
    // outside it on every lane (a copy it cuts adds another share of its busy time): the window
    // ends at stage 0's last batch, which the copies can reach.
    std::size_t leapsWithinSteady(std::size_t a, std::size_t most) const
    {
        const TimeNs copyStart = plan.firstStart + times(shift(), a);
        std::size_t leaps = most;
        for (const LaneSweep& sweep : sweeps) {
            const Interval steady = sweep.m_context.steady;
            if (sweep.m_started && steady.start <= copyStart && copyStart < steady.end) {
                const TimeNs room = steady.end - sweep.m_cursor; // the lane's copy a + 1 onwards
                leaps = std::min(leaps, room < 0 ? 0 : static_cast<std::size_t>(room / shift()));
            }
        }
        return leaps;
    }

    // Whether every lane's sweep now (at the start of copy a + 1) is `was` (copy a's start) moved
    // one period, and what the copies a + 1 .. a + leaps read is too.
    bool repeats(const std::vector<LaneMark>& was, std::size_t a, std::size_t leaps) const
    {
        if (!transfersRepeat(a, leaps)) {
            return false;
        }
        const TimeNs copyStart = plan.firstStart + times(shift(), a); // of copy a's stage work
        for (std::size_t lane = 0; lane < sweeps.size(); ++lane) {
            const LaneSweep& sweep = sweeps[lane];
            const LaneMark& e = was[lane];
            if (!e.started) {
                if (sweep.m_started || sweep.m_spans.size() != e.spans) {
                    return false; // a lane that starts in the copies
                }
                continue; // no work yet, nor in any copy
            }
            // Where the lane stands after the last copy: every gap of the copies ends by then.
            const TimeNs end = sweep.m_cursor + times(shift(), leaps);
            const Interval steady = sweep.m_context.steady;
            const bool steadyAlike = steady.end <= steady.start || steady.end <= copyStart || steady.start >= end
                || (steady.start <= copyStart && steady.end >= end);
            if (sweep.m_cursor != e.cursor + shift() || sweep.m_drainFrom < end || !steadyAlike
                || !flushRepeats(sweep, e.window, end)) {
                return false;
            }
        }
        return true;
    }

    // The transfers a copy's F, B and I read (Transfers::feeding()): key x + step the key x moved
    // one period, over every key that copies a .. a + leaps read.
    bool transfersRepeat(std::size_t a, std::size_t leaps) const
    {
        if (!plan.reads.any()) {
            return true;
        }
        const int low = plan.reads.low + step() * static_cast<int>(a);
        const int high = plan.reads.high + step() * static_cast<int>(a + leaps); // the last copy's
        if (high >= static_cast<int>(transfers.mbs)) {
            return false;
        }
        for (std::size_t lane = 0; lane < sweeps.size(); ++lane) {
            for (int key = low; key + step() <= high; ++key) {
                const std::size_t before = lane * transfers.mbs + static_cast<std::size_t>(key);
                const std::size_t after = before + static_cast<std::size_t>(step());
                if (transfers.count[after] != transfers.count[before]
                    || !transfersMoved(&transfers.in[after * transfers.slots], &transfers.in[before * transfers.slots],
                        transfers.count[before], shift())) {
                    return false;
                }
            }
        }
        return true;
    }

    // Whether the flush windows the sweep reads in the copies repeat: from the one it stood at
    // when copy a began (`from`), each window after those the copy passed is one of them moved one
    // period. It reads them in order and passes one only at a time past its end (ends are sorted),
    // so before `end` (every gap of the copies ends by then) it reads up to the first that ends at
    // or after `end`, and that one only if it starts before. A window that ends before it starts
    // (a batch's forward written late, say) is read and passed like any other.
    bool flushRepeats(const LaneSweep& sweep, std::size_t from, TimeNs end) const
    {
        const std::vector<Interval>& flush = sweep.m_flush;
        if (!sweep.m_flushEndsSorted || sweep.m_window < from) {
            return false;
        }
        const std::size_t perCopy = sweep.m_window - from;
        for (std::size_t j = from + perCopy; j < flush.size(); ++j) {
            const bool last = flush[j].end >= end; // the sweep does not pass it in the copies
            if (last && flush[j].start >= end) {
                break; // nor does it meet it
            }
            if (perCopy == 0 || !isMoved(flush[j], flush[j - perCopy], shift())) {
                return false; // a window the copies meet that copy a did not (a drain's, say)
            }
            if (last) {
                break;
            }
        }
        return true;
    }

    void leap(const std::vector<LaneMark>& was, std::size_t k)
    {
        for (std::size_t lane = 0; lane < sweeps.size(); ++lane) {
            LaneSweep& sweep = sweeps[lane];
            const LaneMark& e = was[lane];
            if (!e.started) {
                continue;
            }
            const std::size_t first = e.spans, last = sweep.m_spans.size();
            sweep.m_spans.reserve(last + k * (last - first));
            for (std::size_t j = 1; j <= k; ++j) {
                const TimeNs by = times(shift(), j);
                for (std::size_t i = first; i < last; ++i) {
                    BubbleSpan span = sweep.m_spans[i];
                    span.start += by;
                    span.end += by;
                    sweep.m_spans.push_back(span);
                }
            }
            StageReport& report = sweep.m_report;
            report.busy += times(report.busy - e.busy, k);
            for (std::size_t i = 0; i < report.busyByKind.size(); ++i) {
                report.busyByKind[i] += times(report.busyByKind[i] - e.busyByKind[i], k);
            }
            for (std::size_t c = 0; c < report.idleByCause.size(); ++c) {
                report.idleByCause[c] += times(report.idleByCause[c] - e.idleByCause[c], k);
            }
            sweep.m_steadyBusy += times(sweep.m_steadyBusy - e.steadyBusy, k);
            sweep.m_window += k * (sweep.m_window - e.window);
            sweep.m_cursor += times(shift(), k);
        }
    }
};

bool PeriodicLeap::sweep(
    const TraceSnapshot& trace, const LeapPlan& plan, const Transfers& transfers, std::vector<LaneSweep>& sweeps)
{
    SweepWalk walk{trace, plan, transfers, sweeps};
    const TraceRepeat& repeat = plan.repeat;
    for (std::size_t a = kFirstTry; a <= kLastTry && a + 1 <= repeat.copies; ++a) {
        walk.walkTo(repeat.begin(a));
        const std::vector<SweepWalk::LaneMark> earlier = walk.marks();
        walk.walkTo(repeat.begin(a + 1));
        const std::size_t leaps = walk.leapsWithinSteady(a, repeat.copies - a);
        if (leaps > 0 && walk.repeats(earlier, a, leaps)) {
            walk.leap(earlier, leaps);
            walk.at = repeat.begin(a + 1 + leaps);
            walk.walkTo(trace.size());
            return true;
        }
    }
    walk.walkTo(trace.size());
    return false;
}

} // namespace bs::profiler::detail
