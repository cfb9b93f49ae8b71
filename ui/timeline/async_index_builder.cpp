#include "ui/timeline/async_index_builder.h"

#include "profiler/analysis/analyze.h"

#include <QtConcurrent/QtConcurrentRun>

namespace bs::ui {

AsyncIndexBuilder::AsyncIndexBuilder(QObject* parent)
    : QObject(parent)
{
    connect(&m_watcher, &QFutureWatcher<BuiltTimeline>::finished, this, &AsyncIndexBuilder::finished);
}

AsyncIndexBuilder::~AsyncIndexBuilder()
{
    m_watcher.waitForFinished();
}

void AsyncIndexBuilder::request(std::shared_ptr<const profiler::TraceSnapshot> snapshot,
                                const profiler::AnalysisOptions& options)
{
    Request r{std::move(snapshot), options};
    if (m_watcher.isRunning()) {
        m_pending = std::move(r); // replaces an older queued one: only the newest matters
        return;
    }
    launch(std::move(r));
}

void AsyncIndexBuilder::launch(Request request)
{
    ++m_started;
    m_watcher.setFuture(QtConcurrent::run([request = std::move(request)] {
        BuiltTimeline out;
        if (!request.snapshot) {
            out.index = TimelineIndex::build(nullptr);
            return out;
        }
        auto report = std::make_shared<profiler::Report>(profiler::analyze(*request.snapshot, request.options));
        out.index = TimelineIndex::build(request.snapshot, report->bubbles);
        out.report = std::move(report);
        out.markers = traceMarkers(*request.snapshot);
        return out;
    }));
}

void AsyncIndexBuilder::finished()
{
    const BuiltTimeline result = m_watcher.result();
    if (m_pending) {
        Request next = std::move(*m_pending);
        m_pending.reset();
        launch(std::move(next));
    }
    Q_EMIT built(result);
}

} // namespace bs::ui
