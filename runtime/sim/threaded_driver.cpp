#include "runtime/sim/threaded_driver.h"

#include <algorithm>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
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
        , m_p(schedule.stages())
        , m_mbs(static_cast<std::size_t>(schedule.totalMicrobatches()))
        , m_activation(static_cast<std::size_t>(m_p) * m_mbs, kNotYet)
        , m_gradient(static_cast<std::size_t>(m_p) * m_mbs, kNotYet)
        , m_finalVersions(static_cast<std::size_t>(m_p), 0)
        , m_end(static_cast<std::size_t>(m_p), 0)
    {
        if (options.initialVersions.size() == m_finalVersions.size()) {
            m_finalVersions = options.initialVersions;
        }
    }

    Result<DriveStats> run()
    {
        m_origin = Clock::now();
        std::vector<std::thread> workers;
        workers.reserve(static_cast<std::size_t>(m_p));
        for (int s = 0; s < m_p; ++s) {
            workers.emplace_back([this, s] { worker(s); });
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
    TimeNs now() const
    {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - m_origin).count();
    }
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

    // Waits until the input of `a` (on stage s) has arrived. False if the run stopped or failed.
    bool waitForInput(int s, const Action& a)
    {
        const TimeNs* arrival = nullptr;
        if (const int from = senderOf(a, m_p); from >= 0) {
            arrival = &(from < s ? m_activation : m_gradient)[slot(s, a.microbatch)];
        }
        const auto deadline = Clock::now() + m_threaded.inputTimeout;
        std::unique_lock lock(m_mutex);
        for (;;) {
            if (m_failed) {
                return false;
            }
            if (stopRequested()) {
                lock.unlock();
                fail(makeError(ErrorCode::Cancelled, "run stopped", "stage " + std::to_string(s) + " before " + toString(a)));
                return false;
            }
            if (!arrival || (*arrival != kNotYet && *arrival <= now())) {
                return true;
            }
            if (Clock::now() > deadline) {
                lock.unlock();
                fail(makeError(ErrorCode::Deadlock, "stage " + std::to_string(s) + " waited too long for the input of "
                                                        + toString(a),
                               "timeout " + std::to_string(m_threaded.inputTimeout.count()) + " ms"));
                return false;
            }
            auto wait = std::chrono::nanoseconds(kPollInterval);
            if (arrival && *arrival != kNotYet) { // produced, still in transit: sleep until it lands
                wait = std::min(wait, std::chrono::nanoseconds(*arrival - now()));
            }
            m_cv.wait_for(lock, wait);
        }
    }

    void worker(int s)
    {
        const auto& program = m_schedule.programs[static_cast<std::size_t>(s)];
        int version = m_finalVersions[static_cast<std::size_t>(s)];
        for (const Action& a : program) {
            if (!waitForInput(s, a)) {
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
            record(s, a, began, end, version, *outcome);
            if (a.kind == ActionKind::Update) {
                ++version;
            }
        }
        std::lock_guard lock(m_mutex);
        m_finalVersions[static_cast<std::size_t>(s)] = version;
    }

    void record(int s, const Action& a, TimeNs start, TimeNs end, int version, const ActionOutcome& outcome)
    {
        auto event = actionEvent(a, m_options.timeOrigin + start, m_options.timeOrigin + end, version, outcome.bytes);
        if (a.kind != ActionKind::Update) {
            event.microbatch += m_options.microbatchOffset;
        }
        m_store.append(event);
        const int to = receiverOf(a, m_p);
        const TimeNs arrival = to >= 0 ? end + m_executor.commTime(s, to, outcome.sendBytes) : end;
        std::lock_guard lock(m_mutex);
        if (to >= 0) {
            (to > s ? m_activation : m_gradient)[slot(to, a.microbatch)] = arrival;
        }
        m_end[static_cast<std::size_t>(s)] = end;
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
    int m_p;
    std::size_t m_mbs;
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
    if (Status one = requireOneStagePerRank(schedule, "the threaded driver"); !one) {
        return one.error();
    }
    if (options.cut) {
        return makeError(ErrorCode::InvalidArgument, "a batch-boundary cut is supported by the serial drive() only",
                         "DriveOptions::cut");
    }
    return ThreadedRun(schedule, executor, store, options, threaded).run();
}

} // namespace bs::runtime
