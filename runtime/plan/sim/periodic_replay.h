#pragma once
// Internal to the scheduler core: its state between two actions, and the replay of a drive's
// steady state. A schedule's programs repeat batch after batch, and with durations that depend on
// nothing but the action (the cost model without cold costs) the drive repeats with them: once
// its whole state after some batch's worth of actions is the state one batch earlier moved by a
// time Δ (every clock, ready time and pending arrival), a micro-batch shift m and an update
// count, everything it does next is what it did in that batch, moved the same way, for as long
// as the programs keep repeating. The replay checks exactly that (state and programs), writes
// the repeated events as copies moved by Δ, m and the updates, advances the state past them,
// and leaves the drive to run the rest (the last batches' drain) as usual. The trace is the one
// the drive writes action by action, event for event: tests/runtime/plan/sim/periodic_replay_test.cpp.

#include "base/time.h"
#include "profiler/trace/trace_event.h"
#include "profiler/trace/trace_repeat.h"
#include "runtime/plan/schedule/schedule.h"

#include <cstddef>
#include <limits>
#include <vector>

namespace bs::runtime::detail {

inline constexpr TimeNs kNotYet = std::numeric_limits<TimeNs>::max();

/// Arrival times of the tensors that cross stages: activations (after F) and gradients (after B/I).
class Arrivals
{
public:
    Arrivals(int stages, int microbatches);
    TimeNs& activation(int toStage, int mb) { return m_activation[index(toStage, mb)]; }
    TimeNs& gradient(int toStage, int mb) { return m_gradient[index(toStage, mb)]; }
    TimeNs activationAt(int toStage, int mb) const { return m_activation[index(toStage, mb)]; }
    TimeNs gradientAt(int toStage, int mb) const { return m_gradient[index(toStage, mb)]; }
    int stages() const { return m_stages; }

private:
    std::size_t index(int stage, int mb) const
    {
        return static_cast<std::size_t>(stage) * m_mbs + static_cast<std::size_t>(mb);
    }
    int m_stages;
    std::size_t m_mbs;
    std::vector<TimeNs> m_activation; // [stage s] = when F(s−1, mb)'s output reaches stage s
    std::vector<TimeNs> m_gradient; // [stage s] = when B/I(s+1, mb)'s gradient reaches stage s
};

/// What the rest of a drive depends on, between two actions (besides the programs).
struct DriveState
{
    DriveState(int ranks, int stages, int microbatches);

    std::vector<TimeNs> clock; ///< per rank: the end of its last action
    std::vector<std::size_t> pc; ///< per rank: its next action
    std::vector<int> version; ///< per stage: updates applied
    std::vector<TimeNs> ready; ///< per rank: when its next action can start (kNotYet: not yet known)
    Arrivals arrivals;
    int started = 0; ///< 1 + the highest micro-batch forwarded so far
};

/// The replay of a drive's steady state (see the top of this file), for one drive.
class PeriodicReplay
{
public:
    /// `eligible`: every action's duration comes from the stateless cost model and nothing
    /// watches the drive action by action (no callback, stop or cut). Off otherwise, and for a
    /// schedule of fewer than four batches or whose programs are not whole batches long.
    PeriodicReplay(const Schedule& schedule, bool eligible);

    /// The action count at which the driver calls mark() next (never, when off).
    std::size_t nextMark() const { return m_nextMark; }
    /// Whether the driver passes each event it publishes to record().
    bool recording() const { return m_recording; }
    void record(const profiler::TraceEvent& event) { m_period.push_back(event); }

    /// At nextMark() actions, `state` the driver's: the first time, remembers it and records the
    /// batch of actions that follows; the next, if `state` is the remembered one moved by one
    /// period, writes the periods the programs repeat for and advances `state` past them.
    /// `slots(n)` gives room for up to n events in a row (a pointer and how many, at least one),
    /// `publish(n)` publishes the first n of them once written, `announce(repeat)` is told where
    /// the copies will lie (profiler::TraceRepeat) before the first is written, so that a reader
    /// following the trace can stop walking what it will not need; `eventsWritten` the events the
    /// drive has written so far. Returns the actions so replayed (0: none, the drive goes on as
    /// it was).
    template<typename Slots, typename Publish, typename Announce>
    std::size_t mark(
        DriveState& state, Slots&& slots, Publish&& publish, Announce&& announce, std::size_t eventsWritten)
    {
        const std::size_t periods = markAndMeasure(state, eventsWritten);
        if (periods == 0) {
            return 0;
        }
        const std::size_t count = m_period.size();
        announce(
            profiler::TraceRepeat{m_periodFirst, count, periods, m_shift, m_microbatchesPerPeriod, m_updatesPerPeriod});
        for (std::size_t k = 1; k <= periods; ++k) {
            const Move move{static_cast<TimeNs>(k) * m_shift, static_cast<std::int32_t>(k) * m_microbatchesPerPeriod,
                static_cast<std::int32_t>(k) * m_updatesPerPeriod};
            for (std::size_t done = 0; done < count;) {
                // A tight loop over locals: through the driver's slot and counter and this
                // object's fields, which its stores could alias, each event read them back.
                const auto [out, room] = slots(count - done);
                const profiler::TraceEvent* from = m_period.data() + done;
                for (std::size_t i = 0; i < room; ++i) {
                    writeMoved(out[i], from[i], move);
                }
                publish(room);
                done += room;
            }
        }
        advance(state, periods);
        return periods * m_actionsPerPeriod;
    }

private:
    struct Snapshot
    {
        std::vector<TimeNs> clock, ready;
        std::vector<std::size_t> pc;
        std::vector<int> version;
        int started = 0;
        int low = 0; ///< the lowest micro-batch a pending action can read an arrival of
        std::vector<TimeNs> activation, gradient; ///< [stage · (started − low) + mb − low]
    };

    // The replayable periods at this mark (0: none); remembers the state when it is the first.
    std::size_t markAndMeasure(const DriveState& state, std::size_t eventsWritten);
    Snapshot snapshotOf(const DriveState& state) const;
    bool onePeriodOn(const Snapshot& earlier, const Snapshot& now);
    std::size_t repeatingPeriods(const Snapshot& now) const;
    std::size_t repeatingFrom(const std::vector<Action>& program, std::size_t from, std::size_t length) const;
    int lowestPending(const std::vector<std::size_t>& pc, bool toTheEnd) const;
    // What k periods move an event by.
    struct Move
    {
        TimeNs time;
        std::int32_t microbatches, updates;
    };
    // `e` moved by `move` into `out`, every field written once and none read back: copied whole
    // and then moved in place, each event's moved fields waited on the copy's wider stores to them
    // (failed store forwarding), three quarters of the replay's time.
    static void writeMoved(profiler::TraceEvent& out, const profiler::TraceEvent& e, Move move)
    {
        out.start = e.start + move.time;
        out.end = e.end + move.time;
        out.bytes = e.bytes;
        out.microbatch = e.microbatch + (e.kind == profiler::EventKind::Update ? move.updates : move.microbatches);
        out.version = e.version + move.updates;
        out.stage = e.stage;
        out.kind = e.kind;
        out.lane = e.lane;
        out.aux = e.aux;
    }
    void advance(DriveState& state, std::size_t periods) const;

    const Schedule& m_schedule;
    std::vector<std::size_t> m_length; // per rank: its actions per period (one batch)
    std::size_t m_actionsPerPeriod = 0;
    int m_microbatchesPerPeriod = 0;
    std::size_t m_nextMark = std::numeric_limits<std::size_t>::max();
    int m_marksLeft = 0;
    bool m_recording = false;
    Snapshot m_earlier;
    std::vector<profiler::TraceEvent> m_period; // the events of the actions since m_earlier
    std::size_t m_periodFirst = 0; // the trace index of m_period's first event
    // Of the period found: its time, its updates per stage (the same on every stage), and the
    // lowest micro-batch pending at its end (Snapshot::low).
    TimeNs m_shift = 0;
    int m_updatesPerPeriod = 0;
    int m_low = 0;
};

} // namespace bs::runtime::detail
