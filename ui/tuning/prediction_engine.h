#pragma once
// Sliders never block (STYLE.md B.3): requests are debounced by a short single-shot timer, then
// predict() runs on a worker (QtConcurrent); requests arriving meanwhile collapse into one
// follow-up with the newest settings. Results come back on the UI thread as signals.

#include "ui/tuning/what_if.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QMetaType>
#include <QObject>
#include <QTimer>

#include <optional>

Q_DECLARE_METATYPE(bs::ui::PredictionPtr)

namespace bs::ui {

class PredictionEngine : public QObject
{
    Q_OBJECT
public:
    static constexpr int kDebounceMs = 0; ///< 0: coalesce within one event-loop pass; runs queue behind a running one

    explicit PredictionEngine(QObject* parent = nullptr);
    ~PredictionEngine() override;

    /// Asks for a prediction of `config`; the newest request wins. Thread: UI.
    void request(const WhatIfConfig& config);
    /// Computes synchronously on the calling thread (screenshot mode, tests); also emits.
    void predictNow(const WhatIfConfig& config);
    bool isBusy() const;
    PredictionPtr latest() const { return m_latest; }
    /// Milliseconds from the request() that produced the latest result to its arrival.
    double lastLatencyMs() const { return m_lastLatencyMs; }

Q_SIGNALS:
    void predicted(bs::ui::PredictionPtr prediction);
    void predictionFailed(const QString& message);

private:
    using Outcome = Result<PredictionPtr>;
    void launch();
    void finished();
    void deliver(const Outcome& outcome);

    QTimer m_debounce;
    QFutureWatcher<Outcome> m_watcher;
    std::optional<WhatIfConfig> m_pending;
    bool m_running = false;
    QElapsedTimer m_sinceRequest;
    qint64 m_requestNs = 0; ///< m_sinceRequest time of the request being computed
    qint64 m_pendingSinceNs = 0; ///< m_sinceRequest time of the oldest unserved request
    PredictionPtr m_latest;
    double m_lastLatencyMs = 0;
};

} // namespace bs::ui
