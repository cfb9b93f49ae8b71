#pragma once
// Internal to analysis: both walks of a trace that says where it repeats (TraceRepeat: a
// simulation's drive writes its steady state as copies of one batch's events) take the copies in
// one step instead of event by event. At N = 100 batches over 95% of a simulated trace is copies,
// and the two walks were two thirds of a simulate() call after the drive.
//
// Why it is exact. Each walk keeps running state, updated event by event by rules that commute
// with moving an event (time, micro-batch, version, batch): maxima, sums, counts, and entries
// keyed by micro-batch or batch. Copy c of the period touches only keys at or above low(c) =
// low(0) + c · step (from the period's own events), so entries below low(c) are final once copy c
// begins. If the state at the start of copy a + 1 is the one at the start of copy a moved by one
// period (scalars moved or equal, the entries at or above low(a + 1) those at or above low(a)
// moved, what the walk reads of the whole trace periodic over the copies), then by induction the
// state at the start of copy c is the start of copy a moved c − a times, and the state after the
// last copy is written directly: the entries that settle copy by copy (one band a copy) and the
// moving window, moved. Every premise is checked on the state itself before anything is written;
// where one fails, the walk goes on event by event (same report, the time it took before).
//
// Only the producer writes a TraceRepeat, and the checks do not trust it beyond the events'
// order: that copy c is period 0 moved c times is the producer's word (periodic_replay_test
// checks it field for field for every schedule).

#include "profiler/analysis/lane_sweep.h"
#include "profiler/trace/trace_repeat.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

namespace bs::profiler {
class TraceSnapshot;
}

namespace bs::profiler::detail {

/// The lowest and highest key (micro-batch or batch) that period 0's events of one kind touch.
struct KeyRange
{
    int low = INT_MAX;
    int high = INT_MIN;
    void add(int key)
    {
        low = std::min(low, key);
        high = std::max(high, key);
    }
    bool any() const { return low <= high; }
};

/// What the walks need to know of a trace's repeat: the repeat and the keys its period touches.
struct LeapPlan
{
    TraceRepeat repeat;
    int batches = 0; ///< global batches a period moves by: repeat.microbatches / m
    KeyRange slots; ///< micro-batches of its stage work (memory slots: F, B, I, W)
    KeyRange sends; ///< micro-batches of its sends into a lane (Transfers)
    KeyRange forwardBatches; ///< batches of its forwards (forward spans, batch starts)
    KeyRange reads; ///< micro-batches of its F, B and I (the transfers pass 2 reads)
    TimeNs firstStart = 0; ///< the earliest start of its stage work
};

/// The plan for `trace` analysed with `options` over `lanes` lanes, or none where the walks
/// cannot leap: no repeat, fewer than kMinCopies copies, settings that change during the run, a
/// period that moves its micro-batches by other than whole batches or holds work of none.
std::optional<LeapPlan> leapPlanFor(const TraceSnapshot& trace, const AnalysisOptions& options, int lanes);

struct PeriodicLeap
{
    /// Copies a trace must repeat for the walks to try (two are walked to compare).
    static constexpr std::size_t kMinCopies = 4;
    /// Where both walks compare the state at the start of copy a + 1 with copy a's: from the
    /// second copy (the first batches after the recorded one can still carry the warm-up's traces,
    /// a first backward's end, say) to the fifth; a state that has not settled by then is taken to
    /// stay unsettled, and the walk goes on event by event.
    static constexpr std::size_t kFirstTry = 2;
    static constexpr std::size_t kLastTry = 5;

    /// Pass 1 (FirstPassState::add() for every event, in append order) over all of `trace` into
    /// `state`, fresh; the copies in one step where the state repeats. True when it leapt (the
    /// resume points are then dropped: pass 2 leaps instead of splitting).
    static bool walkFirstPass(const TraceSnapshot& trace, const LeapPlan& plan, FirstPassState& state);

    /// Pass 2 (LaneSweep::add() for every analysed event) over all of `trace` into `sweeps`, one a
    /// lane, fresh, every lane in start order; `transfers` pass 1's. True when it leapt.
    static bool sweep(
        const TraceSnapshot& trace, const LeapPlan& plan, const Transfers& transfers, std::vector<LaneSweep>& sweeps);

private:
    struct FirstWalk; // periodic_leap.cpp
    struct SweepWalk; // periodic_sweep_leap.cpp

    // What k periods move by, one period moving by `value`.
    static TimeNs times(TimeNs value, std::size_t k) { return value * static_cast<TimeNs>(k); }
    static int times(int value, std::size_t k) { return value * static_cast<int>(k); }
    /// Whether `later` is `earlier` moved `by` in time (a transfer, a flush window, forwards' span).
    static bool isMoved(const Interval& later, const Interval& earlier, TimeNs by)
    {
        return later.start == earlier.start + by && later.end == earlier.end + by;
    }
    /// Whether the `count` transfers into one key, in order, are another key's moved `by`.
    static bool transfersMoved(const Interval* later, const Interval* earlier, std::size_t count, TimeNs by)
    {
        return std::equal(
            later, later + count, earlier, [by](const Interval& x, const Interval& y) { return isMoved(x, y, by); });
    }
};

} // namespace bs::profiler::detail
