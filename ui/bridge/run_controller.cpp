#include "ui/bridge/run_controller.h"

#include "ui/common/format.h"

#include <QMetaObject>

#include <chrono>

namespace bs::ui {

class RunController::Context final : public RunContext
{
public:
    Context(RunController* owner, int run)
        : m_owner(owner)
        , m_run(run)
    {}
    bool stopRequested() const override { return m_owner->m_stop.load(); }
    void publish(RunUpdatePtr update) override
    {
        const auto now = std::chrono::steady_clock::now();
        const auto minGap = std::chrono::milliseconds(1000 / kMaxUpdatesPerSecond);
        if (!update->finished && now - m_last < minGap) {
            m_pending = std::move(update); // coalesce: the newest snapshot wins
            return;
        }
        m_last = now;
        m_pending.reset();
        deliver(std::move(update));
    }
    /// Delivers a coalesced update that was held back, so the UI ends on the newest data.
    void flush()
    {
        if (m_pending) {
            deliver(std::move(m_pending));
        }
    }

private:
    void deliver(RunUpdatePtr update)
    {
        RunController* owner = m_owner;
        const int run = m_run;
        const bool finished = update->finished;
        // Queued onto the UI thread; discarded if the controller is gone by then.
        QMetaObject::invokeMethod(
            owner,
            [owner, run, finished, u = std::move(update)]() {
                if (finished) {
                    Q_EMIT owner->runFinished(run, u);
                } else {
                    Q_EMIT owner->runUpdated(run, u);
                }
            },
            Qt::QueuedConnection);
    }

    RunController* m_owner;
    int m_run;
    std::chrono::steady_clock::time_point m_last{};
    RunUpdatePtr m_pending;
};

RunController::RunController(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<bs::ui::RunUpdatePtr>();
    m_worker = std::thread([this] { workerLoop(); });
}

RunController::~RunController()
{
    {
        std::lock_guard lock(m_mutex);
        m_quit = true;
        m_queue.clear();
    }
    m_stop = true;
    m_wake.notify_all();
    m_worker.join();
}

void RunController::enqueue(std::unique_ptr<RunBackend> backend)
{
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back(std::move(backend));
    }
    m_wake.notify_all();
}

void RunController::stop()
{
    std::lock_guard lock(m_mutex);
    m_queue.clear();
    if (m_running) {
        m_stop = true;
    }
}

Status RunController::apply(const runtime::RunConfig& wanted)
{
    std::lock_guard lock(m_mutex);
    if (!m_current) {
        return makeError(ErrorCode::Unavailable, "no run is executing");
    }
    return m_current->apply(wanted);
}

bool RunController::isBusy() const
{
    std::lock_guard lock(m_mutex);
    return m_running || !m_queue.empty();
}

void RunController::workerLoop()
{
    for (;;) {
        std::unique_ptr<RunBackend> backend;
        int run = 0;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_quit || !m_queue.empty(); });
            if (m_quit) {
                return;
            }
            backend = std::move(m_queue.front());
            m_queue.pop_front();
            m_running = true;
            m_current = backend.get();
            m_stop = false;
            run = m_nextRun++;
        }
        const QString label = toQt(backend->label());
        QMetaObject::invokeMethod(
            this, [this, run, label] { Q_EMIT runStarted(run, label); }, Qt::QueuedConnection);
        Context ctx(this, run);
        Status status = makeError(ErrorCode::Internal, "run did not start");
        try {
            status = backend->run(ctx);
        } catch (const std::exception& e) { // backends must not throw; never let it cross into Qt
            status = makeError(ErrorCode::Internal, e.what(), backend->label());
        }
        if (!status) {
            ctx.flush();
            const QString message = toQt(status.error().describe());
            QMetaObject::invokeMethod(
                this, [this, run, message] { Q_EMIT runFailed(run, message); }, Qt::QueuedConnection);
        }
        bool drained = false;
        {
            std::lock_guard lock(m_mutex);
            m_running = false;
            m_current = nullptr;
            drained = m_queue.empty();
        }
        if (drained) {
            QMetaObject::invokeMethod(
                this, [this] { Q_EMIT idle(); }, Qt::QueuedConnection);
        }
    }
}

} // namespace bs::ui
