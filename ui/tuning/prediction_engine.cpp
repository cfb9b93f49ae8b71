#include "ui/tuning/prediction_engine.h"

#include "ui/common/format.h"

#include <QtConcurrent/QtConcurrentRun>

namespace bs::ui {

PredictionEngine::PredictionEngine(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<bs::ui::PredictionPtr>();
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(kDebounceMs);
    connect(&m_debounce, &QTimer::timeout, this, &PredictionEngine::launch);
    connect(&m_watcher, &QFutureWatcher<Outcome>::finished, this, &PredictionEngine::finished);
    m_sinceRequest.start();
}

PredictionEngine::~PredictionEngine()
{
    m_watcher.waitForFinished();
}

void PredictionEngine::request(const WhatIfConfig& config)
{
    if (!m_pending) {
        m_pendingSinceNs = m_sinceRequest.nsecsElapsed(); // latency counts from the first unserved move
    }
    m_pending = config;
    m_debounce.start();
}

bool PredictionEngine::isBusy() const
{
    return m_running || m_pending.has_value() || m_debounce.isActive();
}

void PredictionEngine::launch()
{
    if (m_running || !m_pending) {
        return; // finished() launches the newest pending request
    }
    const WhatIfConfig config = *m_pending;
    m_pending.reset();
    m_requestNs = m_pendingSinceNs;
    m_running = true;
    m_watcher.setFuture(QtConcurrent::run([config] { return predict(config); }));
}

void PredictionEngine::finished()
{
    m_running = false;
    deliver(m_watcher.result());
    if (m_pending) {
        launch();
    }
}

void PredictionEngine::predictNow(const WhatIfConfig& config)
{
    m_requestNs = m_sinceRequest.nsecsElapsed();
    deliver(predict(config));
}

void PredictionEngine::deliver(const Outcome& outcome)
{
    m_lastLatencyMs = static_cast<double>(m_sinceRequest.nsecsElapsed() - m_requestNs) / 1e6;
    if (!outcome) {
        Q_EMIT predictionFailed(toQt(outcome.error().describe()));
        return;
    }
    m_latest = outcome.value();
    Q_EMIT predicted(m_latest);
}

} // namespace bs::ui
