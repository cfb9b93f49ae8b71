#pragma once
// Drives RunBackends on a worker thread and tells the UI about their progress through queued
// signals carrying immutable RunUpdates (STYLE.md B.3: workers never touch QObjects). Runs queue
// up and play one after another (the demo: PACI, then 1F1B-flush). Never blocks the UI thread.

#include "ui/bridge/run_backend.h"

#include <QMetaType>
#include <QObject>
#include <QString>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

Q_DECLARE_METATYPE(bs::ui::RunUpdatePtr)

namespace bs::ui {

class RunController : public QObject
{
    Q_OBJECT
public:
    /// Updates reach the UI at most this often while a run is going (finished updates always do).
    static constexpr int kMaxUpdatesPerSecond = 30;

    explicit RunController(QObject* parent = nullptr);
    /// Requests stop and joins the worker (bounded by the backend's stop latency, < 1 s).
    ~RunController() override;

    /// Appends a run; it starts when the ones before it have finished. Thread: UI.
    void enqueue(std::unique_ptr<RunBackend> backend);
    /// Stops the current run (keeping what it recorded) and drops queued ones. Returns at once;
    /// runFailed(…, "stopped") / idle() follow. Thread: UI.
    void stop();
    /// True while a run is executing or queued.
    bool isBusy() const;
    /// Live Apply: forwards to the executing backend's RunBackend::apply() (its next global-batch
    /// boundary). Returns its validation result at once; Unavailable when nothing runs. Thread: any.
    Status apply(const runtime::RunConfig& wanted);

Q_SIGNALS:
    void runStarted(int run, const QString& label);
    /// Progress, at most kMaxUpdatesPerSecond per second.
    void runUpdated(int run, bs::ui::RunUpdatePtr update);
    void runFinished(int run, bs::ui::RunUpdatePtr update);
    /// The run failed or was stopped; `message` is user-readable.
    void runFailed(int run, const QString& message);
    /// The queue is empty and no run is executing.
    void idle();

private:
    class Context;
    void workerLoop();

    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::unique_ptr<RunBackend>> m_queue;
    bool m_running = false;
    RunBackend* m_current = nullptr; // the executing backend (apply); guarded by m_mutex
    bool m_quit = false;
    std::atomic<bool> m_stop{false};
    int m_nextRun = 0;
    std::thread m_worker; // last member: started after everything above exists
};

} // namespace bs::ui
