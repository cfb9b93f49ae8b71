// Calibrated what-if: per-stage times measured in a run's trace replace the device profile, so the
// prediction of the run's own settings matches what it measured, slider moves rescale them, and
// the "Prediction vs measured" view shows both figures with the relative error.
#include "ui/tuning/calibration.h"
#include "ui/tuning/prediction_check_view.h"
#include "ui/tuning/prediction_engine.h"

#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>

#include <cmath>

using namespace bs::ui;

namespace {

/// The "measured" run: the same model on another machine (H100 profile), so the CPU profile's
/// prediction is far off until calibrated.
WhatIfConfig measuredSettings()
{
    WhatIfConfig c;
    c.deviceProfile = "h100";
    c.batches = 2;
    c.baseline.clear();
    return c;
}

double relative(double a, double b)
{
    return std::abs(a - b) / b;
}

} // namespace

class TestCalibration : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void calibratedPredictionMatchesTheMeasuredRun()
    {
        const WhatIfConfig settings = measuredSettings();
        auto measured = predictRun(settings, "paci");
        QVERIFY(measured);
        auto calibration = calibrationFromTrace(
            *measured->result.trace, settings.run.pipeline.stages, settings.microBatchSize(), "run");
        QVERIFY2(calibration, calibration ? "" : calibration.error().describe().c_str());
        QCOMPARE((*calibration)->stages, 8);

        WhatIfConfig cpu = settings; // what the sliders ask: the default CPU profile
        cpu.deviceProfile = "cpu";
        auto uncalibrated = predictRun(cpu, "paci");
        cpu.calibration = *calibration;
        auto calibrated = predictRun(cpu, "paci");
        QVERIFY(uncalibrated && calibrated);
        const double measuredSpan = static_cast<double>(measured->result.report.makespan);
        QVERIFY(relative(static_cast<double>(uncalibrated->result.report.makespan), measuredSpan) > 0.5);
        QVERIFY(relative(static_cast<double>(calibrated->result.report.makespan), measuredSpan) < 0.02);
        QVERIFY(relative(calibrated->result.throughputSamplesPerSecond, measured->result.throughputSamplesPerSecond) < 0.02);
        QVERIFY(std::abs(calibrated->result.report.bubbleFraction - measured->result.report.bubbleFraction) < 0.02);
        // Memory still comes from the model: bytes, not micro-batch units.
        QCOMPARE(calibrated->staticBytes, measured->staticBytes);

        // The same calibration predicts 1F1B-flush too (times do not depend on the schedule).
        auto flushMeasured = predictRun(settings, "1f1b");
        auto flushPredicted = predictRun(cpu, "1f1b");
        QVERIFY(flushMeasured && flushPredicted);
        QVERIFY(relative(static_cast<double>(flushPredicted->result.report.makespan),
                    static_cast<double>(flushMeasured->result.report.makespan))
            < 0.05);
    }

    void sliderSettingsRescaleTheMeasuredTimes()
    {
        const WhatIfConfig settings = measuredSettings();
        auto measured = predictRun(settings, "paci");
        QVERIFY(measured);
        auto calibration = calibrationFromTrace(*measured->result.trace, 8, settings.microBatchSize(), "run");
        QVERIFY(calibration);
        WhatIfConfig half = settings;
        half.calibration = *calibration;
        half.run.pipeline.microBatchSize = settings.microBatchSize() / 2;
        auto smaller = predictRun(half, "paci");
        QVERIFY(smaller);
        // Forward of stage 0: the first compute event on stage 0 of each trace.
        const auto firstForward = [](const bs::profiler::TraceSnapshot& trace) {
            bs::profiler::TimeNs d = 0;
            trace.forEach([&](const bs::profiler::TraceEvent& e) {
                if (d == 0 && e.stage == 0 && e.kind == bs::profiler::EventKind::Forward) {
                    d = e.duration();
                }
            });
            return d;
        };
        const auto full = firstForward(*measured->result.trace);
        QVERIFY(full > 0);
        QVERIFY(std::abs(static_cast<double>(firstForward(*smaller->result.trace)) - full / 2.0) <= 1.0);
        // Fewer stages: the measured total re-split, so each stage does more.
        WhatIfConfig four = half;
        four.run.pipeline.microBatchSize = settings.microBatchSize();
        four.run.pipeline.stages = 4;
        auto fewer = predictRun(four, "paci");
        QVERIFY(fewer);
        QVERIFY(firstForward(*fewer->result.trace) > full);
    }

    void incompleteTracesDoNotCalibrate()
    {
        bs::profiler::TraceMeta meta;
        meta.stages = 2;
        std::vector<bs::profiler::TraceEvent> events(1);
        events[0].end = 100;
        QVERIFY(!calibrationFromTrace(*bs::profiler::makeSnapshot(meta, events), 2, 8, "x"));
    }

    void checkReportsRelativeErrors()
    {
        bs::profiler::Report predicted;
        predicted.bubbleFraction = 0.11;
        predicted.makespan = 2'000'000'000;
        bs::profiler::Report measured;
        measured.bubbleFraction = 0.10;
        measured.makespan = 2'500'000'000;
        const PredictionCheck check = checkPrediction("paci", "paci", predicted, 125.0, measured, 100.0, 5);
        QCOMPARE(check.figures.size(), std::size_t(3));
        QCOMPARE(check.figures[0].predicted, 11.0);
        QVERIFY(std::abs(check.figures[0].relativeError() - 0.1) < 1e-12);
        QCOMPARE(check.figures[1].relativeError(), 0.25);
        QCOMPARE(check.figures[2].predicted, 400.0); // ms per global batch
        QCOMPARE(check.figures[2].measured, 500.0);
        QCOMPARE(check.figures[2].relativeError(), -0.2);

        PredictionCheckView view;
        QCOMPARE(view.table()->rowCount(), 0);
        QVERIFY(view.summaryText().contains(QStringLiteral("No measured run")));
        view.setChecks({check, check});
        QCOMPARE(view.table()->rowCount(), 6);
        QCOMPARE(view.table()->item(1, 4)->data(Qt::UserRole).toDouble(), 0.25);
        QCOMPARE(view.table()->item(1, 4)->text(), QStringLiteral("+25.0 %"));
        QCOMPARE(view.table()->item(2, 2)->text(), QStringLiteral("400 ms"));
    }

    void calibratedSliderPathStaysFast()
    {
        const WhatIfConfig settings = measuredSettings();
        auto measured = predictRun(settings, "paci");
        QVERIFY(measured);
        auto calibration = calibrationFromTrace(*measured->result.trace, 8, settings.microBatchSize(), "run");
        QVERIFY(calibration);
        PredictionEngine engine;
        QSignalSpy predicted(&engine, &PredictionEngine::predicted);
        WhatIfConfig slider; // default CPU profile, a = 8, with the 1F1B baseline
        slider.calibration = *calibration;
        slider.run.pipeline.microbatches = 4;
        engine.request(slider);
        QVERIFY(predicted.wait(5000));
        const auto prediction = predicted.last().at(0).value<PredictionPtr>();
        QVERIFY(prediction->config.calibration);
        QVERIFY(prediction->baseline);
        qInfo("calibrated predict(): %.2f ms compute, %.2f ms request to result", prediction->computeMs,
            engine.lastLatencyMs());
        QVERIFY(engine.lastLatencyMs() < 50.0);
    }
};

QTEST_MAIN(TestCalibration)
#include "tst_calibration.moc"
