#include "runtime/plan/sim/scheduler_core.h"

#include "runtime/plan/schedule/validate.h"
#include "runtime/plan/sim/cost_model_executor.h"

#include <limits>

namespace bs::runtime {

profiler::TraceEvent actionEvent(const Action& action, TimeNs start, TimeNs end, int version, std::int64_t bytes)
{
    profiler::TraceEvent event;
    event.start = start;
    event.end = end;
    event.stage = static_cast<std::uint16_t>(action.stage);
    event.kind = toEventKind(action.kind);
    event.microbatch = action.microbatch;
    event.version = version;
    event.bytes = bytes;
    if (action.kind == ActionKind::Update) {
        event.aux = static_cast<std::uint16_t>(action.lastMb - action.firstMb + 1); // micro-batches applied
    }
    return event;
}

std::vector<int> chunkOfStage(const Schedule& schedule)
{
    std::vector<int> chunkOf(static_cast<std::size_t>(schedule.stages()), 0);
    std::vector<int> held(static_cast<std::size_t>(schedule.ranks()), 0);
    for (int s = 0; s < schedule.stages(); ++s) {
        chunkOf[static_cast<std::size_t>(s)] = held[static_cast<std::size_t>(schedule.rankOf(s))]++;
    }
    return chunkOf;
}

void placeOnRank(
    profiler::TraceEvent& event, const Action& action, const Schedule& schedule, const std::vector<int>& chunkOf)
{
    event.stage = static_cast<std::uint16_t>(schedule.rankOf(action.stage));
    if (action.kind != ActionKind::Update && !schedule.onePerRank()) {
        event.aux =
            static_cast<std::uint16_t>(chunkOf[static_cast<std::size_t>(action.stage)]); // which of the rank's stages
    }
}

std::pair<TimeNs, TimeNs> overlapHalves(TimeNs start, TimeNs end, TimeNs forwardShare)
{
    const TimeNs whole = end - start;
    const TimeNs share = forwardShare >= 0 ? std::min(forwardShare, whole) : whole / 2;
    return {start + share, end};
}

Error atAction(Error error, const Action& action)
{
    error.context = "stage " + std::to_string(action.stage) + ", " + toString(action)
        + (error.context.empty() ? "" : ": " + error.context);
    return error;
}

namespace {

constexpr TimeNs kNotYet = std::numeric_limits<TimeNs>::max();

/// Arrival times of the tensors that cross stages: activations (after F) and gradients (after B/I).
class Arrivals
{
public:
    Arrivals(int stages, int microbatches)
        : m_mbs(static_cast<std::size_t>(microbatches))
        , m_activation(static_cast<std::size_t>(stages) * m_mbs, kNotYet)
        , m_gradient(static_cast<std::size_t>(stages) * m_mbs, kNotYet)
    {}
    TimeNs& activation(int toStage, int mb) { return m_activation[index(toStage, mb)]; }
    TimeNs& gradient(int toStage, int mb) { return m_gradient[index(toStage, mb)]; }

private:
    std::size_t index(int stage, int mb) const
    {
        return static_cast<std::size_t>(stage) * m_mbs + static_cast<std::size_t>(mb);
    }
    std::size_t m_mbs;
    std::vector<TimeNs> m_activation; // [stage s] = when F(s−1, mb)'s output reaches stage s
    std::vector<TimeNs> m_gradient; // [stage s] = when B/I(s+1, mb)'s gradient reaches stage s
};

/// What the rest of a drive depends on, between two actions (besides the programs).
struct DriveState
{
    DriveState(int ranks, int stages, int microbatches)
        : clock(static_cast<std::size_t>(ranks), 0)
        , pc(static_cast<std::size_t>(ranks), 0)
        , version(static_cast<std::size_t>(stages), 0)
        , ready(static_cast<std::size_t>(ranks), kNotYet)
        , arrivals(stages, microbatches)
    {}

    std::vector<TimeNs> clock; ///< per rank: the end of its last action
    std::vector<std::size_t> pc; ///< per rank: its next action
    std::vector<int> version; ///< per stage: updates applied
    std::vector<TimeNs> ready; ///< per rank: when its next action can start (kNotYet: not yet known)
    Arrivals arrivals;
    int started = 0; ///< 1 + the highest micro-batch forwarded so far
};

class Driver
{
public:
    Driver(const Schedule& schedule, ActionExecutor& executor, profiler::TraceStore& store, const DriveOptions& options)
        : m_schedule(schedule)
        , m_executor(executor)
        , m_store(store)
        , m_options(options)
        , m_ranks(schedule.ranks())
        , m_stages(schedule.stages())
        , m_total(schedule.totalMicrobatches())
        , m_state(m_ranks, m_stages, m_total)
        , m_chunkOf(chunkOfStage(schedule))
        , m_onePerRank(schedule.onePerRank())
        , m_costModel(dynamic_cast<const CostModelExecutor*>(&executor))
        , m_timeOrigin(options.timeOrigin)
        , m_microbatchOffset(options.microbatchOffset)
        , m_appendBatch(options.appendBatch)
        , m_hasOnAction(static_cast<bool>(options.onAction))
    {
        m_rankOf.resize(static_cast<std::size_t>(m_stages));
        for (int s = 0; s < m_stages; ++s) {
            m_rankOf[static_cast<std::size_t>(s)] = schedule.rankOf(s);
        }
        if (options.initialVersions.size() == m_state.version.size()) {
            m_state.version = options.initialVersions;
        }
    }

    Result<DriveStats> run()
    {
        auto stats = runActions();
        flush();
        return stats;
    }

private:
    Result<DriveStats> runActions()
    {
        DriveStats stats;
        const std::size_t total = m_schedule.actionCount();
        for (int r = 0; r < m_ranks; ++r) {
            m_state.ready[static_cast<std::size_t>(r)] = readyTime(r);
        }
        while (stats.actions + m_skipped < total) {
            if (m_options.stop && m_options.stop->load(std::memory_order_relaxed)) {
                return makeError(ErrorCode::Cancelled, "run stopped",
                    std::to_string(stats.actions) + " of " + std::to_string(total) + " actions done");
            }
            if (m_limit == kNoLimit && m_options.cut && m_options.cutEvery > 0
                && m_options.cut->load(std::memory_order_relaxed)) {
                fixCut();
                if (stats.actions + m_skipped >= total) {
                    break;
                }
            }
            const auto [rank, start] = earliestReady();
            if (rank < 0) {
                return deadlock();
            }
            if (!perform(rank, start)) {
                return m_error;
            }
            // Only the acting rank and the ranks it sent to can have a new ready time.
            m_state.ready[static_cast<std::size_t>(rank)] = readyTime(rank);
            for (int i = 0; i < m_sentCount; ++i) {
                const int to = m_sentTo[i];
                if (to != rank) {
                    m_state.ready[static_cast<std::size_t>(to)] = readyTime(to);
                }
            }
            ++stats.actions;
        }
        for (TimeNs clock : m_state.clock) {
            stats.makespan = std::max(stats.makespan, clock);
        }
        stats.finalVersions = m_state.version;
        if (m_limit != kNoLimit && m_limit < m_schedule.totalMicrobatches()) {
            stats.cutAt = m_limit;
        }
        return stats;
    }

    static constexpr int kNoLimit = std::numeric_limits<int>::max();

    // The rank whose next action can start first and when (-1: none can), ties to the lower rank.
    // Two interleaved scans, even and odd ranks, merged: one scan is a chain of dependent
    // compare-and-moves, the longest path of the whole loop.
    std::pair<int, TimeNs> earliestReady() const
    {
        const TimeNs* ready = m_state.ready.data();
        int evenRank = -1;
        int oddRank = -1;
        TimeNs even = kNotYet;
        TimeNs odd = kNotYet;
        int r = 0;
        for (; r + 1 < m_ranks; r += 2) {
            if (ready[r] < even) {
                even = ready[r];
                evenRank = r;
            }
            if (ready[r + 1] < odd) {
                odd = ready[r + 1];
                oddRank = r + 1;
            }
        }
        if (r < m_ranks && ready[r] < even) {
            even = ready[r];
            evenRank = r;
        }
        // Ties: the lower rank, whichever scan saw it.
        if (odd < even || (odd == even && oddRank >= 0 && oddRank < evenRank)) {
            return {oddRank, odd};
        }
        return {evenRank, even};
    }

    // The slot the next event is written to: in place in the store's storage when batching (so
    // the event is never built on the stack and copied: that copy stalled on store forwarding and
    // was a fifth of the loop), else m_staging, which publish() then appends.
    profiler::TraceEvent& nextSlot()
    {
        if (m_appendBatch <= 1) {
            return m_staging;
        }
        if (m_written == m_room) { // batch full (or none begun): publish it, begin the next
            flush();
            m_out = m_store.appendSpace(m_room);
            m_room = std::min(m_room, m_appendBatch);
        }
        return m_out[m_written];
    }

    // Publishes the event nextSlot() returned, every field of which has been written.
    void publish(const profiler::TraceEvent& event)
    {
        if (m_appendBatch <= 1) {
            m_store.append(event);
            return;
        }
        ++m_written;
    }

    void flush()
    {
        if (m_written > 0) {
            m_store.commit(m_written);
        }
        m_written = 0;
        m_room = 0;
    }

    // Fixes the cut boundary (see DriveOptions::cut) and skips what lies beyond it on every rank.
    void fixCut()
    {
        const int every = m_options.cutEvery;
        m_limit = (m_state.started + every - 1) / every * every;
        for (int r = 0; r < m_ranks; ++r) {
            m_state.ready[static_cast<std::size_t>(r)] = readyTime(r);
        }
    }

    bool beyondCut(const Action& a) const
    {
        // An overlapped pair's backward half is of an older micro-batch: its forward decides.
        return a.kind == ActionKind::Update ? a.firstMb >= m_limit : a.microbatch >= m_limit;
    }

    // When this plain action's cross-stage input arrives (0 when it has none), or kNotYet.
    TimeNs inputArrival(const Action& a)
    {
        if (const int from = senderOf(a, m_stages); from >= 0) {
            return from < a.stage ? m_state.arrivals.activation(a.stage, a.microbatch)
                                  : m_state.arrivals.gradient(a.stage, a.microbatch);
        }
        return 0;
    }

    // When rank r's next action could start, or kNotYet if an input has not been produced.
    TimeNs readyTime(int r)
    {
        const auto& program = m_schedule.programs[static_cast<std::size_t>(r)];
        auto& pcRef = m_state.pc[static_cast<std::size_t>(r)];
        while (m_limit != kNoLimit && pcRef < program.size() && beyondCut(program[pcRef])) {
            ++pcRef;
            ++m_skipped;
        }
        const auto pc = pcRef;
        if (pc >= program.size()) {
            return kNotYet;
        }
        const Action& a = program[pc];
        // Checked here, as each action comes up, rather than in a walk of the programs of its own
        // before the drive: a misfit blocks its rank, so nothing indexes by it, and the drive
        // then ends as a deadlock would, naming it (deadlock()).
        if (!indicesFit(a, r, m_rankOf.data(), m_stages, m_total)) [[unlikely]] {
            m_misfit = true;
            return kNotYet;
        }
        TimeNs input =
            a.isOverlap() ? std::max(inputArrival(a.forwardHalf()), inputArrival(a.backwardHalf())) : inputArrival(a);
        // Same-stage dependencies (F before B, I before W) hold by program order (validated).
        return input == kNotYet ? kNotYet : std::max(m_state.clock[static_cast<std::size_t>(r)], input);
    }

    // False when the executor failed (m_error says how): a Status per action cost more than most
    // of what is done here.
    bool perform(int r, TimeNs start)
    {
        const auto ru = static_cast<std::size_t>(r);
        const Action& scheduled = m_schedule.programs[ru][m_state.pc[ru]];
        if (scheduled.kind == ActionKind::Update && scheduled.lastMb >= m_limit) [[unlikely]] {
            Action clipped = scheduled;
            clipped.lastMb = m_limit - 1; // straddles the cut: apply the micro-batches before it
            return performAction(r, start, clipped);
        }
        return performAction(r, start, scheduled);
    }

    bool performAction(int r, TimeNs start, const Action& a)
    {
        const auto ru = static_cast<std::size_t>(r);
        if (a.kind == ActionKind::Forward || a.isOverlap()) {
            m_state.started = std::max(m_state.started, a.microbatch + 1);
        }
        // The simulator's executor directly (a formula; see CostModelExecutor::model), others and
        // its errors through the interface.
        ActionOutcome outcome;
        if (!m_costModel || !m_costModel->model(a, outcome)) {
            auto performed = m_executor.perform(a);
            if (!performed) {
                m_error = atAction(performed.error(), a);
                return false;
            }
            outcome = *performed;
        }
        const TimeNs end = start + std::max<TimeNs>(outcome.duration, 0);
        m_sentCount = 0;
        if (a.isOverlap()) {
            // One lane per rank: the pair is drawn as its forward then its backward half.
            const TimeNs middle = overlapHalves(start, end, outcome.forwardShare).first;
            record(a.forwardHalf(), start, middle, outcome.bytes, outcome.sendBytes, end);
            record(a.backwardHalf(), middle, end, 0, outcome.sendBytes, end);
        } else {
            record(a, start, end, outcome.bytes, outcome.sendBytes, end);
        }
        m_state.clock[ru] = end;
        ++m_state.pc[ru];
        return true;
    }

    // Appends the event of one plain action on rank r's lane and sends what it produced; the
    // transfer leaves when the whole action (`doneAt`, the pair's end) is done.
    void record(const Action& a, TimeNs start, TimeNs end, std::int64_t bytes, std::int64_t sendBytes, TimeNs doneAt)
    {
        const auto su = static_cast<std::size_t>(a.stage);
        const bool isUpdate = a.kind == ActionKind::Update;
        // actionEvent() and placeOnRank(), from tables, every field written once in place: the
        // rank's lane, and on multi-stage ranks the chunk in aux (U: the micro-batches applied).
        profiler::TraceEvent& event = nextSlot();
        event.start = m_timeOrigin + start;
        event.end = m_timeOrigin + end;
        event.bytes = bytes;
        event.microbatch = isUpdate ? a.microbatch : a.microbatch + m_microbatchOffset;
        event.version = m_state.version[su];
        event.stage = static_cast<std::uint16_t>(m_rankOf[su]);
        event.kind = toEventKind(a.kind);
        event.lane = profiler::Lane::Compute;
        event.aux = isUpdate ? static_cast<std::uint16_t>(a.lastMb - a.firstMb + 1)
            : m_onePerRank   ? std::uint16_t{0}
                             : static_cast<std::uint16_t>(m_chunkOf[su]);
        if (isUpdate) {
            ++m_state.version[su];
        }
        publish(event);
        if (!m_hasOnAction) {
            sendOutput(a, doneAt, sendBytes);
            return;
        }
        const profiler::TraceEvent performed = event; // a Send may reuse the slot (m_staging)
        sendOutput(a, doneAt, sendBytes);
        m_options.onAction(a, performed); // after the Send: the store holds all the action did
    }

    // Sends what plain action `a` produced to the stage that takes it, if any.
    void sendOutput(const Action& a, TimeNs doneAt, std::int64_t sendBytes)
    {
        if (const int to = receiverOf(a, m_stages); to >= 0) {
            const TimeNs arrival = send(a.stage, to, a.microbatch, doneAt, sendBytes);
            (to > a.stage ? m_state.arrivals.activation(to, a.microbatch)
                          : m_state.arrivals.gradient(to, a.microbatch)) = arrival;
            m_sentTo[m_sentCount++] = m_rankOf[static_cast<std::size_t>(to)];
        }
    }

    // Records the transfer on the sender's comm lane (when it takes time) and returns its arrival.
    // Between two stages of one rank nothing travels.
    TimeNs send(int from, int to, int mb, TimeNs at, std::int64_t bytes)
    {
        const int fromRank = m_rankOf[static_cast<std::size_t>(from)];
        const int toRank = m_rankOf[static_cast<std::size_t>(to)];
        if (fromRank == toRank && from != to) {
            return at;
        }
        const TimeNs comm = m_costModel ? m_costModel->commTime(from, to, bytes) : m_executor.commTime(from, to, bytes);
        if (comm > 0) {
            profiler::TraceEvent& event = nextSlot();
            event.start = m_timeOrigin + at;
            event.end = m_timeOrigin + at + comm;
            event.bytes = bytes;
            event.microbatch = mb + m_microbatchOffset;
            event.version = m_state.version[static_cast<std::size_t>(from)];
            event.stage = static_cast<std::uint16_t>(fromRank);
            event.kind = profiler::EventKind::Send;
            event.lane = profiler::Lane::Comm;
            event.aux = static_cast<std::uint16_t>(toRank);
            publish(event);
        }
        return at + comm;
    }

    Error deadlock() const
    {
        if (m_misfit) {
            if (Status indices = checkIndices(m_schedule); !indices) {
                return indices.error(); // the first misfit in rank order, named
            }
        }
        std::string blocked;
        for (int r = 0; r < m_ranks; ++r) {
            const auto& program = m_schedule.programs[static_cast<std::size_t>(r)];
            const auto pc = m_state.pc[static_cast<std::size_t>(r)];
            if (pc < program.size()) {
                blocked += (blocked.empty() ? "" : ", ") + toString(program[pc]);
            }
        }
        return makeError(ErrorCode::Deadlock, "schedule deadlocked: no rank can make progress", "waiting: " + blocked);
    }

    const Schedule& m_schedule;
    ActionExecutor& m_executor;
    profiler::TraceStore& m_store;
    const DriveOptions& m_options;
    int m_ranks;
    int m_stages;
    int m_total; // micro-batches
    bool m_misfit = false; // an action named a stage or micro-batch out of bounds (indicesFit())
    // Clocks, program counters and cached ready times per rank, weight versions per stage (each
    // stage, or chunk, has its own weights), the arrivals.
    DriveState m_state;
    std::vector<int> m_chunkOf; // per stage: its index among its rank's stages
    int m_sentTo[2] = {}; // ranks the last action sent to: one, or two for an F&B pair
    int m_sentCount = 0;
    std::vector<int> m_rankOf; // per stage: Schedule::rankOf, as a table
    bool m_onePerRank;
    const CostModelExecutor* m_costModel; // m_executor when it is the cost model, else null
    Error m_error; // why perform() returned false
    // Options read per event, copied: through the reference the compiler reloads them after
    // every store to an event.
    TimeNs m_timeOrigin;
    std::int32_t m_microbatchOffset;
    std::size_t m_appendBatch;
    bool m_hasOnAction;
    // DriveOptions::appendBatch > 1: events are written in place in the store's storage from
    // m_out and published (TraceStore::commit) m_room at a time at most.
    profiler::TraceEvent* m_out = nullptr;
    std::size_t m_room = 0;
    std::size_t m_written = 0;
    profiler::TraceEvent m_staging; // DriveOptions::appendBatch <= 1: the event being built
    int m_limit = kNoLimit; // the cut boundary once fixed: micro-batches >= it are skipped
    std::size_t m_skipped = 0;
};

} // namespace

Result<DriveStats> drive(
    const Schedule& schedule, ActionExecutor& executor, profiler::TraceStore& store, const DriveOptions& options)
{
    if (schedule.programs.empty()) {
        return makeError(ErrorCode::InvalidArgument, "schedule has no stages");
    }
    if (Status placed = checkStagePlacement(schedule); !placed) {
        return placed.error(); // the ranks it names index the core's per-rank tables
    }
    return Driver(schedule, executor, store, options).run();
}

} // namespace bs::runtime
