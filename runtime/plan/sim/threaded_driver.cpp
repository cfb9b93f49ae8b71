#include "runtime/plan/sim/threaded_driver.h"

#include <algorithm>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace bs::runtime {

namespace {

using Clock = std::chrono::steady_clock;
constexpr TimeNs kNotYet = std::numeric_limits<TimeNs>::max();
constexpr auto kPollInterval = std::chrono::milliseconds(10); // how often a waiting stage checks stop

class ThreadedRun
{
public:
    ThreadedRun(const Schedule& schedule, ActionExecutor& executor, profiler::TraceStore& store,
        const DriveOptions& options, const ThreadedOptions& threaded)
        : m_schedule(schedule)
        , m_executor(executor)
        , m_store(store)
        , m_options(options)
        , m_threaded(threaded)
        , m_stages(schedule.stages())
        , m_ranks(schedule.ranks())
        , m_mbs(static_cast<std::size_t>(schedule.totalMicrobatches()))
        , m_chunkOf(chunkOfStage(schedule))
        , m_activation(static_cast<std::size_t>(m_stages) * m_mbs, kNotYet)
        , m_gradient(static_cast<std::size_t>(m_stages) * m_mbs, kNotYet)
        , m_finalVersions(static_cast<std::size_t>(m_stages), 0)
        , m_end(static_cast<std::size_t>(m_ranks), 0)
    {
        if (options.initialVersions.size() == m_finalVersions.size()) {
            m_finalVersions = options.initialVersions;
        }
        m_initialVersions = m_finalVersions; // read by every worker while others may finish
    }

    Result<DriveStats> run()
    {
        m_origin = Clock::now();
        std::vector<std::thread> workers;
        workers.reserve(static_cast<std::size_t>(m_ranks));
        for (int r = 0; r < m_ranks; ++r) {
            workers.emplace_back([this, r] { worker(r); });
        }
        for (auto& w : workers) {
            w.join();
        }
        if (m_error) {
            return *m_error;
        }
        DriveStats stats;
        stats.actions = m_schedule.actionCount();
        stats.finalVersions = m_finalVersions;
        for (TimeNs end : m_end) {
            stats.makespan = std::max(stats.makespan, end);
        }
        return stats;
    }

private:
    TimeNs now() const { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - m_origin).count(); }
    std::size_t slot(int stage, int mb) const
    {
        return static_cast<std::size_t>(stage) * m_mbs + static_cast<std::size_t>(mb);
    }

    void fail(Error error)
    {
        std::lock_guard lock(m_mutex);
        if (!m_error) {
            m_error = std::move(error);
        }
        m_failed = true;
        m_cv.notify_all();
    }

    bool stopRequested() const { return m_options.stop && m_options.stop->load(std::memory_order_relaxed); }

    // The slot where the input of plain action `a` arrives, or nullptr when it has none.
    const TimeNs* inputSlot(const Action& a) const
    {
        if (const int from = senderOf(a, m_stages); from >= 0) {
            return &(from < a.stage ? m_activation : m_gradient)[slot(a.stage, a.microbatch)];
        }
        return nullptr;
    }

    // Waits until every input of `a` (on rank r; both halves of an overlapped pair) has arrived.
    // False if the run stopped or failed.
    bool waitForInput(int r, const Action& a)
    {
        std::vector<const TimeNs*> arrivals;
        forEachPart(a, [&](const Action& part) {
            if (const TimeNs* in = inputSlot(part)) {
                arrivals.push_back(in);
            }
        });
        const auto deadline = Clock::now() + m_threaded.inputTimeout;
        std::unique_lock lock(m_mutex);
        for (;;) {
            if (m_failed) {
                return false;
            }
            if (stopRequested()) {
                lock.unlock();
                fail(makeError(ErrorCode::Cancelled, "run stopped", where(r, a) + " before " + toString(a)));
                return false;
            }
            const TimeNs t = now();
            TimeNs pending = 0; // latest arrival still in transit; kNotYet when one is not produced
            for (const TimeNs* in : arrivals) {
                if (*in == kNotYet || *in > t) {
                    pending = std::max(pending, *in);
                }
            }
            if (pending == 0) {
                return true;
            }
            if (Clock::now() > deadline) {
                lock.unlock();
                fail(makeError(ErrorCode::Deadlock, where(r, a) + " waited too long for the input of " + toString(a),
                    "timeout " + std::to_string(m_threaded.inputTimeout.count()) + " ms"));
                return false;
            }
            auto wait = std::chrono::nanoseconds(kPollInterval);
            if (pending != kNotYet) { // produced, still in transit: sleep until it lands
                wait = std::min(wait, std::chrono::nanoseconds(pending - t));
            }
            m_cv.wait_for(lock, wait);
        }
    }

    // "stage 3" where every rank holds one stage (the historic wording), else "rank 1 (stage 3)".
    std::string where(int r, const Action& a) const
    {
        return m_schedule.onePerRank() ? "stage " + std::to_string(r)
                                       : "rank " + std::to_string(r) + " (stage " + std::to_string(a.stage) + ")";
    }

    void worker(int r)
    {
        const auto& program = m_schedule.programs[static_cast<std::size_t>(r)];
        std::vector<int> version = m_initialVersions; // this rank's stages' entries are its own
        for (const Action& a : program) {
            if (!waitForInput(r, a)) {
                return;
            }
            const TimeNs start = now();
            Result<ActionOutcome> outcome = makeError(ErrorCode::Internal, "not run");
            try {
                outcome = m_executor.perform(a);
            } catch (const std::exception& e) { // a stage must never take the process down
                outcome = makeError(ErrorCode::Internal, e.what());
            }
            if (!outcome) {
                fail(atAction(outcome.error(), a));
                return;
            }
            const TimeNs end = now();
            // Time spent inside perform() waiting for a device another stage holds (stages sharing
            // a GPU take turns) is not work: the action began when its measured duration says
            // (executors that measure nothing report 0 and keep the call's span).
            const TimeNs began = outcome->duration > 0 ? std::max(start, end - outcome->duration) : start;
            if (a.isOverlap()) { // drawn as its forward then its backward half, as drive() does
                const TimeNs middle = overlapHalves(began, end, outcome->forwardShare).first;
                record(r, a.forwardHalf(), began, middle, end, version, outcome->bytes, outcome->sendBytes);
                record(r, a.backwardHalf(), middle, end, end, version, 0, outcome->sendBytes);
            } else {
                record(r, a, began, end, end, version, outcome->bytes, outcome->sendBytes);
            }
        }
        std::lock_guard lock(m_mutex);
        for (int s = 0; s < m_stages; ++s) {
            if (m_schedule.rankOf(s) == r) {
                m_finalVersions[static_cast<std::size_t>(s)] = version[static_cast<std::size_t>(s)];
            }
        }
    }

    // Records plain action `a` of rank r and publishes what it produced; the transfer leaves when
    // the whole action (`doneAt`: an overlapped pair's end) is done. Between two stages of one rank
    // nothing travels.
    void record(int r, const Action& a, TimeNs start, TimeNs end, TimeNs doneAt, std::vector<int>& version,
        std::int64_t bytes, std::int64_t sendBytes)
    {
        const auto su = static_cast<std::size_t>(a.stage);
        auto event = actionEvent(a, m_options.timeOrigin + start, m_options.timeOrigin + end, version[su], bytes);
        placeOnRank(event, a, m_schedule, m_chunkOf);
        if (a.kind != ActionKind::Update) {
            event.microbatch += m_options.microbatchOffset;
        }
        if (a.kind == ActionKind::Update) {
            ++version[su];
        }
        m_store.append(event);
        const int to = receiverOf(a, m_stages);
        const bool sameRank = to >= 0 && m_schedule.rankOf(to) == r;
        const TimeNs arrival = to >= 0 && !sameRank ? doneAt + m_executor.commTime(a.stage, to, sendBytes) : doneAt;
        std::lock_guard lock(m_mutex);
        if (to >= 0) {
            (to > a.stage ? m_activation : m_gradient)[slot(to, a.microbatch)] = arrival;
        }
        m_end[static_cast<std::size_t>(r)] = end;
        if (m_options.onAction) {
            m_options.onAction(a, event);
        }
        m_cv.notify_all();
    }

    const Schedule& m_schedule;
    ActionExecutor& m_executor;
    profiler::TraceStore& m_store;
    const DriveOptions& m_options;
    const ThreadedOptions& m_threaded;
    int m_stages;
    int m_ranks;
    std::size_t m_mbs;
    std::vector<int> m_chunkOf;
    std::vector<int> m_initialVersions;
    Clock::time_point m_origin;

    std::mutex m_mutex; // guards everything below
    std::condition_variable m_cv;
    std::vector<TimeNs> m_activation;
    std::vector<TimeNs> m_gradient;
    std::vector<int> m_finalVersions;
    std::vector<TimeNs> m_end;
    std::optional<Error> m_error;
    bool m_failed = false;
};

} // namespace

Result<DriveStats> driveThreaded(const Schedule& schedule, ActionExecutor& executor, profiler::TraceStore& store,
    const DriveOptions& options, const ThreadedOptions& threaded)
{
    if (schedule.programs.empty()) {
        return makeError(ErrorCode::InvalidArgument, "schedule has no stages");
    }
    if (options.cut) {
        return makeError(ErrorCode::InvalidArgument, "a batch-boundary cut is supported by the serial drive() only",
            "DriveOptions::cut");
    }
    return ThreadedRun(schedule, executor, store, options, threaded).run();
}

} // namespace bs::runtime
