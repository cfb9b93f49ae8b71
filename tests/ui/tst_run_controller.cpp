// RunController: runs play in order on the worker, updates arrive on the UI thread (throttled),
// Stop ends a run within a second and keeps what was recorded.
#include "ui/bridge/run_controller.h"
#ifdef BS_HAVE_RUN_SESSION
#include "ui/bridge/run_session_backend.h"
#endif

#include <QSignalSpy>
#include <QTest>

#include <chrono>
#include <thread>

using namespace bs::ui;

namespace {

/// Appends one event every millisecond until `events` or stop; publishes after each.
class FakeBackend final : public RunBackend
{
public:
    FakeBackend(std::string label, int events)
        : m_label(std::move(label))
        , m_events(events)
    {}
    std::string label() const override { return m_label; }
    bs::Status run(RunContext& ctx) override
    {
        bs::profiler::TraceStore store({1, "wall", m_label, {}});
        for (int i = 0; i < m_events; ++i) {
            if (ctx.stopRequested()) {
                auto u = std::make_shared<RunUpdate>();
                u->label = m_label;
                u->trace = store.snapshot();
                ctx.publish(u);
                return bs::makeError(bs::ErrorCode::Cancelled, "stopped");
            }
            bs::profiler::TraceEvent e;
            e.start = i * 10;
            e.end = i * 10 + 10;
            e.microbatch = i;
            store.append(e);
            auto u = std::make_shared<RunUpdate>();
            u->label = m_label;
            u->trace = store.snapshot();
            u->progress = static_cast<double>(i + 1) / m_events;
            u->finished = i + 1 == m_events;
            ctx.publish(u);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return bs::ok();
    }

private:
    std::string m_label;
    int m_events;
};

} // namespace

class TestRunController : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void runsPlayInOrderAndFinish()
    {
        RunController controller;
        QSignalSpy started(&controller, &RunController::runStarted);
        QSignalSpy updated(&controller, &RunController::runUpdated);
        QSignalSpy finished(&controller, &RunController::runFinished);
        QSignalSpy idle(&controller, &RunController::idle);
        controller.enqueue(std::make_unique<FakeBackend>("first", 200));
        controller.enqueue(std::make_unique<FakeBackend>("second", 5));
        QVERIFY(idle.wait(10'000));
        QCOMPARE(started.count(), 2);
        QCOMPARE(started.at(0).at(1).toString(), QStringLiteral("first"));
        QCOMPARE(started.at(1).at(1).toString(), QStringLiteral("second"));
        QCOMPARE(finished.count(), 2);
        const auto last = finished.at(0).at(1).value<RunUpdatePtr>();
        QCOMPARE(last->trace->size(), std::size_t(200));
        // ~200 ms of publishing at 1 kHz is throttled to about 30 Hz.
        QVERIFY2(updated.count() < 40, qPrintable(QString::number(updated.count())));
        QVERIFY(!controller.isBusy());
    }

    void stopReturnsWithinASecondKeepingTheTrace()
    {
        RunController controller;
        QSignalSpy started(&controller, &RunController::runStarted);
        QSignalSpy updated(&controller, &RunController::runUpdated);
        QSignalSpy failed(&controller, &RunController::runFailed);
        QSignalSpy idle(&controller, &RunController::idle);
        controller.enqueue(std::make_unique<FakeBackend>("long", 1'000'000));
        controller.enqueue(std::make_unique<FakeBackend>("never", 10));
        QVERIFY(started.wait(5000));
        QTest::qWait(100);
        const auto t0 = std::chrono::steady_clock::now();
        controller.stop();
        QVERIFY(idle.wait(1000));
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.at(0).at(1).toString().contains(QStringLiteral("stopped")));
        QCOMPARE(started.count(), 1); // the queued run was dropped
        QVERIFY(updated.count() > 0);
        const auto kept = updated.last().at(1).value<RunUpdatePtr>();
        QVERIFY(kept->trace->size() > 10); // what was recorded is kept
    }

#ifdef BS_HAVE_RUN_SESSION
    void liveTrainingThroughRunSession()
    {
        bs::runtime::RunConfig config;
        config.pipeline.stages = 2;
        config.pipeline.microbatches = 2;
        config.pipeline.microBatchSize = 1;
        config.schedule.name = "1f1b";
        config.training.steps = 2;
        config.training.evalInterval = 0;
        config.model.shape.layers = 2;
        RunController controller;
        QSignalSpy finished(&controller, &RunController::runFinished);
        QSignalSpy failed(&controller, &RunController::runFailed);
        controller.enqueue(std::make_unique<RunSessionBackend>("live", config));
        QVERIFY(finished.wait(120'000));
        QCOMPARE(failed.count(), 0);
        const auto last = finished.at(0).at(1).value<RunUpdatePtr>();
        QVERIFY(last->trace && last->trace->size() > 0);
        QCOMPARE(last->metrics.size(), std::size_t(2)); // one record per global batch
        // The panels' inputs: both clocks, throughput and per-stage drift come across.
        for (const bs::runtime::BatchMetrics& m : last->metrics) {
            QVERIFY(m.wallTimeS.value_or(0) > 0);
            QVERIFY(m.virtualTimeS > 0);
            QVERIFY(m.tokensPerSVirtual > 0 && m.tokensPerSWall > 0);
            QCOMPARE(m.stages.size(), std::size_t(2));
            QVERIFY(!m.valLoss); // evalInterval = 0
        }
        QVERIFY(last->metrics[1].wallTimeS > last->metrics[0].wallTimeS);
        QVERIFY(last->report.has_value());
    }

    // Issue 14: a run that cannot fit (gpt2-medium at b = 512: terabytes) is refused by the
    // pre-flight with the estimate, as a failed run, before anything is allocated.
    void preflightRefusesARunThatCannotFit()
    {
        bs::runtime::RunConfig config;
        config.model.preset = "gpt2-medium";
        config.model.shape = bs::gptPreset("gpt2-medium").value();
        config.pipeline.stages = 2;
        config.pipeline.microbatches = 2;
        config.pipeline.microBatchSize = 512;
        config.schedule.name = "1f1b";
        config.device.name = "cpu";
        config.training.steps = 1;
        RunController controller;
        QSignalSpy failed(&controller, &RunController::runFailed);
        QSignalSpy finished(&controller, &RunController::runFinished);
        const auto t0 = std::chrono::steady_clock::now();
        controller.enqueue(std::make_unique<RunSessionBackend>("too big", config));
        QVERIFY(failed.wait(10'000));
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
        const QString message = failed.at(0).at(1).toString();
        QVERIFY2(message.contains(QStringLiteral("the run would need about")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("nearest setting that fits")), qPrintable(message));
        QCOMPARE(finished.count(), 0);
    }
#endif

    void destructorStopsARunningBackend()
    {
        const auto t0 = std::chrono::steady_clock::now();
        {
            RunController controller;
            QSignalSpy started(&controller, &RunController::runStarted);
            controller.enqueue(std::make_unique<FakeBackend>("long", 1'000'000));
            QVERIFY(started.wait(5000));
        }
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(6));
    }
};

QTEST_MAIN(TestRunController)
#include "tst_run_controller.moc"
