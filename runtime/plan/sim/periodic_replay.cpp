#include "runtime/plan/sim/periodic_replay.h"

#include "base/huge_pages.h"

#include <algorithm>

namespace bs::runtime::detail {

Arrivals::Arrivals(int stages, int microbatches)
    : m_stages(stages)
    , m_mbs(static_cast<std::size_t>(microbatches))
{
    assignAdvised(m_activation, static_cast<std::size_t>(stages) * m_mbs, kNotYet);
    assignAdvised(m_gradient, static_cast<std::size_t>(stages) * m_mbs, kNotYet);
}

DriveState::DriveState(int ranks, int stages, int microbatches)
    : clock(static_cast<std::size_t>(ranks), 0)
    , pc(static_cast<std::size_t>(ranks), 0)
    , version(static_cast<std::size_t>(stages), 0)
    , ready(static_cast<std::size_t>(ranks), kNotYet)
    , arrivals(stages, microbatches)
{}

namespace {

constexpr std::size_t kNever = std::numeric_limits<std::size_t>::max();
constexpr int kNoneLeft = std::numeric_limits<int>::max();
// Marks tried, a batch apart: an asynchronous schedule's warm-up takes a batch or two to settle.
constexpr int kMarks = 4;

TimeNs movedBy(TimeNs t, TimeNs shift)
{
    return t == kNotYet ? kNotYet : t + shift;
}

} // namespace

PeriodicReplay::PeriodicReplay(const Schedule& schedule, bool eligible)
    : m_schedule(schedule)
{
    const int batches = schedule.params.batches;
    if (!eligible || batches < 4 || schedule.params.microbatches < 1) {
        return;
    }
    const auto perBatch = static_cast<std::size_t>(batches);
    for (const auto& program : schedule.programs) {
        if (program.empty() || program.size() % perBatch != 0) {
            m_length.clear();
            return;
        }
        m_length.push_back(program.size() / perBatch);
        m_actionsPerPeriod += m_length.back();
    }
    m_microbatchesPerPeriod = schedule.params.microbatches;
    m_marksLeft = kMarks;
    m_nextMark = m_actionsPerPeriod;
}

std::size_t PeriodicReplay::markAndMeasure(const DriveState& state, std::size_t eventsWritten)
{
    Snapshot now = snapshotOf(state);
    if (m_recording) {
        if (onePeriodOn(m_earlier, now)) {
            if (const std::size_t periods = repeatingPeriods(now); periods > 0) {
                m_recording = false;
                m_nextMark = kNever;
                m_low = now.low;
                return periods;
            }
        }
        if (--m_marksLeft <= 0) {
            m_recording = false;
            m_nextMark = kNever;
            m_period = {};
            return 0;
        }
    }
    m_earlier = std::move(now);
    m_period.clear();
    m_periodFirst = eventsWritten;
    m_recording = true;
    m_nextMark += m_actionsPerPeriod;
    return 0;
}

// The lowest micro-batch whose arrival a pending action of some rank reads: over each rank's next
// period and the action after it (the drive reads that one for its ready time), or over the
// rest of the programs (`toTheEnd`). kNoneLeft when none does.
int PeriodicReplay::lowestPending(const std::vector<std::size_t>& pc, bool toTheEnd) const
{
    int low = kNoneLeft;
    for (std::size_t r = 0; r < pc.size(); ++r) {
        const auto& program = m_schedule.programs[r];
        const std::size_t end = toTheEnd ? program.size() : std::min(program.size(), pc[r] + m_length[r] + 1);
        for (std::size_t i = pc[r]; i < end; ++i) {
            const Action& a = program[i];
            if (a.kind != ActionKind::Update) {
                low = std::min(low, a.isOverlap() ? std::min(a.microbatch, a.pairMicrobatch) : a.microbatch);
            }
        }
    }
    return low;
}

PeriodicReplay::Snapshot PeriodicReplay::snapshotOf(const DriveState& state) const
{
    Snapshot s;
    s.clock = state.clock;
    s.ready = state.ready;
    s.pc = state.pc;
    s.version = state.version;
    s.started = state.started;
    s.low = lowestPending(state.pc, false);
    if (s.low == kNoneLeft) {
        return s; // the programs are done: nothing to replay
    }
    // Arrivals of micro-batches below `low` are read no more; none at or above `started` has come.
    for (int stage = 0; stage < state.arrivals.stages(); ++stage) {
        for (int mb = std::max(0, s.low); mb < s.started; ++mb) {
            s.activation.push_back(state.arrivals.activationAt(stage, mb));
            s.gradient.push_back(state.arrivals.gradientAt(stage, mb));
        }
    }
    return s;
}

// Whether `now` is `earlier` moved by one period: every rank a period of actions on, every clock
// and known ready time a common Δ > 0 later, every stage the same number of updates on, and the
// pending arrivals Δ later, m micro-batches up.
bool PeriodicReplay::onePeriodOn(const Snapshot& earlier, const Snapshot& now)
{
    if (earlier.low == kNoneLeft || now.low == kNoneLeft || earlier.low < 0) {
        return false;
    }
    const TimeNs shift = now.clock.front() - earlier.clock.front();
    if (shift <= 0) {
        return false;
    }
    for (std::size_t r = 0; r < now.pc.size(); ++r) {
        if (now.pc[r] != earlier.pc[r] + m_length[r] || now.clock[r] != earlier.clock[r] + shift
            || now.ready[r] != movedBy(earlier.ready[r], shift)) {
            return false;
        }
    }
    const int updates = now.version.front() - earlier.version.front();
    for (std::size_t s = 0; s < now.version.size(); ++s) {
        if (now.version[s] - earlier.version[s] != updates) {
            return false;
        }
    }
    const int m = m_microbatchesPerPeriod;
    if (now.started != earlier.started + m || now.low != earlier.low + m
        || now.activation.size() != earlier.activation.size()) {
        return false;
    }
    for (std::size_t i = 0; i < now.activation.size(); ++i) {
        if (now.activation[i] != movedBy(earlier.activation[i], shift)
            || now.gradient[i] != movedBy(earlier.gradient[i], shift)) {
            return false;
        }
    }
    m_shift = shift;
    m_updatesPerPeriod = updates;
    return true;
}

// How many of `program`'s actions from `from` on repeat the action a period (`length`) earlier
// moved by one period. Each also names only what the drive may index by (indicesFit()): by
// induction, since the action it repeats did (the first period's were performed, so checked)
// and only its micro-batches grew, what is left to check is that they stay below `total`.
std::size_t PeriodicReplay::repeatingFrom(
    const std::vector<Action>& program, std::size_t from, std::size_t length) const
{
    const int m = m_microbatchesPerPeriod;
    const int total = m_schedule.totalMicrobatches();
    std::size_t i = from;
    for (; i < program.size(); ++i) {
        const Action& a = program[i];
        const Action& b = program[i - length];
        if (a.kind != b.kind || a.stage != b.stage) {
            break;
        }
        if (a.kind == ActionKind::Update) {
            if (a.microbatch != b.microbatch + m_updatesPerPeriod || a.firstMb != b.firstMb + m
                || a.lastMb != b.lastMb + m) {
                break;
            }
            continue;
        }
        if (a.microbatch != b.microbatch + m || a.microbatch >= total) {
            break;
        }
        if (a.isOverlap()
            && (a.pairStage != b.pairStage || a.pairMicrobatch != b.pairMicrobatch + m || a.pairMicrobatch >= total)) {
            break;
        }
    }
    return i - from;
}

// The periods the drive can skip from `now` (a period on from the remembered state): as many as
// every rank's program repeats for, each rank's next action after them included, provided the
// actions after them read no arrival below the window the advanced state keeps.
std::size_t PeriodicReplay::repeatingPeriods(const Snapshot& now) const
{
    std::size_t periods = kNever;
    for (std::size_t r = 0; r < now.pc.size(); ++r) {
        const std::size_t repeating = repeatingFrom(m_schedule.programs[r], now.pc[r], m_length[r]);
        if (repeating == 0) {
            return 0;
        }
        periods = std::min(periods, (repeating - 1) / m_length[r]);
    }
    const long long up = static_cast<long long>(periods) * m_microbatchesPerPeriod;
    if (periods == 0 || now.started + up > m_schedule.totalMicrobatches()) {
        return 0; // (the arrivals advance() moves up stay in the table)
    }
    std::vector<std::size_t> after = now.pc;
    for (std::size_t r = 0; r < after.size(); ++r) {
        after[r] += periods * m_length[r];
    }
    return lowestPending(after, true) >= now.low + up ? periods : 0;
}

void PeriodicReplay::advance(DriveState& state, std::size_t periods) const
{
    const TimeNs shift = static_cast<TimeNs>(periods) * m_shift;
    for (std::size_t r = 0; r < state.pc.size(); ++r) {
        state.clock[r] += shift;
        state.ready[r] = movedBy(state.ready[r], shift);
        state.pc[r] += periods * m_length[r];
    }
    const int updates = static_cast<int>(periods) * m_updatesPerPeriod;
    for (int& version : state.version) {
        version += updates;
    }
    // The pending arrivals move up: from the top down, as the two windows may overlap.
    const int up = static_cast<int>(periods) * m_microbatchesPerPeriod;
    for (int stage = 0; stage < state.arrivals.stages(); ++stage) {
        for (int mb = state.started - 1; mb >= std::max(0, m_low); --mb) {
            state.arrivals.activation(stage, mb + up) = movedBy(state.arrivals.activationAt(stage, mb), shift);
            state.arrivals.gradient(stage, mb + up) = movedBy(state.arrivals.gradientAt(stage, mb), shift);
        }
    }
    state.started += up;
}

} // namespace bs::runtime::detail
