#pragma once
// Indexes a live run's growing trace off the UI thread. A live run publishes a new snapshot about
// ten times a second; indexing 10^6 events takes ~0.5 s, which on the UI thread would stall
// painting and input. Requests collapse to the newest: while one build runs, only the latest
// snapshot asked for is built next, and every finished build is delivered with `built`.

#include "ui/timeline/timeline_index.h"
#include "ui/timeline/timeline_view.h"

#include <QFutureWatcher>
#include <QMetaType>
#include <QObject>

#include <memory>
#include <optional>
#include <vector>

namespace bs::ui {

/// What one build produces, off the UI thread: the trace's one analysis, the index painted from its
/// bubbles, and the trace's markers (Apply points).
struct BuiltTimeline
{
    std::shared_ptr<const TimelineIndex> index;
    std::shared_ptr<const profiler::Report> report;
    std::vector<TimelineMarker> markers;
};

class AsyncIndexBuilder : public QObject
{
    Q_OBJECT
public:
    explicit AsyncIndexBuilder(QObject* parent = nullptr);
    ~AsyncIndexBuilder() override; ///< waits for a running build (it holds only shared snapshots)

    /// Asks for `snapshot` to be analysed with `options` and indexed; the newest request wins. Thread: UI.
    void request(std::shared_ptr<const profiler::TraceSnapshot> snapshot, const profiler::AnalysisOptions& options);
    /// Drops a queued request (a build already running still delivers).
    void cancelPending() { m_pending.reset(); }
    bool isBusy() const { return m_watcher.isRunning(); }
    /// Builds that started; fewer than requests when requests collapsed.
    int buildsStarted() const { return m_started; }

Q_SIGNALS:
    void built(const bs::ui::BuiltTimeline& timeline);

private:
    struct Request
    {
        std::shared_ptr<const profiler::TraceSnapshot> snapshot;
        profiler::AnalysisOptions options;
    };
    void launch(Request request);
    void finished();

    QFutureWatcher<BuiltTimeline> m_watcher;
    std::optional<Request> m_pending;
    int m_started = 0;
};

} // namespace bs::ui

Q_DECLARE_METATYPE(bs::ui::BuiltTimeline)
