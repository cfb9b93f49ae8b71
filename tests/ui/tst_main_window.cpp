// The window end to end, offscreen: the demo fills both slots, the comparison table equals the
// runs' reports, the charts show the reports, a slider switches to predictions; exports work.
#include "base/atomic_file.h"
#include "profiler/io/chrome_trace.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/export/export.h"
#include "ui/charts/metrics_panel.h"
#include "ui/charts/stage_charts.h"
#include "ui/common/format.h"
#include "ui/compare/compare_view.h"
#include "ui/shell/exporters.h"
#include "ui/shell/main_window.h"
#include "ui/timeline/timeline_view.h"
#include "ui/tuning/prediction_check_view.h"
#include "ui/tuning/tuning_panel.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QMenu>
#include <QSignalSpy>
#include <QSlider>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

using namespace bs::ui;
using Metric = ComparisonModel::Metric;

class TestMainWindow : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void demoFillsBothSlotsAndTheTable()
    {
        MainWindow window(false);
        window.resize(1400, 900);
        window.show();
        DemoOptions demo;
        demo.batches = 2;
        QVERIFY(window.runDemoToEnd(demo));
        CompareView* compare = window.compare();
        for (int slot = 0; slot < 2; ++slot) { // the demo's two runs; the other slots stay hidden
            QVERIFY(compare->timeline(slot)->index() != nullptr);
            QVERIFY(compare->timeline(slot)->index()->eventCount() > 0);
        }
        for (int slot = 2; slot < CompareView::kSlots; ++slot) {
            QVERIFY(!compare->slotShown(slot));
        }
        // A simulated replay is never labelled measured: not in the panel, not in the table.
        QVERIFY2(window.tuning()->figuresTitle().startsWith(QStringLiteral("Simulated: ")),
            qPrintable(window.tuning()->figuresTitle()));
        for (const auto& row : compare->model()->runs()) {
            QVERIFY2(row.label.find("measured") == std::string::npos, row.label.c_str());
        }
        // The table equals the simulated reports of the same settings.
        WhatIfConfig config;
        config.batches = 2;
        auto paci = predictRun(config, "paci");
        auto flush = predictRun(config, "1f1b");
        QVERIFY(paci && flush);
        const ComparisonModel* model = compare->model();
        QCOMPARE(model->runs().size(), std::size_t(2));
        const auto raw = [&](Metric m, int col) {
            return model->index(static_cast<int>(m), col).data(ComparisonModel::RawValueRole).toDouble();
        };
        QCOMPARE(raw(Metric::BubbleFraction, 0), paci->result.report.bubbleFraction);
        QCOMPARE(raw(Metric::BubbleFraction, 1), flush->result.report.bubbleFraction);
        // A replay is a prediction: its throughput and steady bubble are the steady state's, and
        // the 2 batches' whole bubble is never shown as steady.
        QCOMPARE(raw(Metric::Throughput, 0), paci->steady.samplesPerSecond);
        QCOMPARE(raw(Metric::SteadyBubbleFraction, 0), paci->steady.bubbleFraction);
        QVERIFY(raw(Metric::SteadyBubbleFraction, 0) < raw(Metric::BubbleFraction, 0) - 0.1);
        QCOMPARE(raw(Metric::Makespan, 1), static_cast<double>(flush->result.report.makespan));
        QVERIFY(raw(Metric::BubbleFraction, 0) < raw(Metric::BubbleFraction, 1)); // PACI removes the flush
        // Charts show the first run's report.
        const auto& stage0 = paci->result.report.perStage.at(0);
        double idle = 0;
        for (auto t : stage0.idleByCause) {
            idle += static_cast<double>(t);
        }
        const double expected = 100.0 * idle / static_cast<double>(paci->result.report.makespan);
        QVERIFY(qAbs(window.bubbleChart()->stagePercent(0) - expected) < 1e-6);
        QVERIFY(qAbs(window.memoryChart()->stageMiB(0) - stage0.peakMemoryBytes / (1024.0 * 1024.0)) < 1e-6);
    }

    void demoIsProgressive()
    {
        MainWindow window(false);
        window.resize(1400, 900);
        DemoOptions demo;
        demo.batches = 2;
        demo.wallSeconds = 1.5;
        QSignalSpy updated(window.runs(), &RunController::runUpdated);
        QSignalSpy idle(window.runs(), &RunController::idle);
        window.startDemo(demo);
        QVERIFY(updated.wait(5000));
        QTRY_VERIFY_WITH_TIMEOUT(window.compare()->timeline(0)->index() != nullptr, 5000);
        const std::size_t partial = window.compare()->timeline(0)->index()->eventCount();
        QVERIFY(idle.wait(15000));
        const std::size_t full = window.compare()->timeline(0)->index()->eventCount();
        QVERIFY2(partial < full, qPrintable(QStringLiteral("%1 vs %2").arg(partial).arg(full)));
        QVERIFY(window.compare()->timeline(1)->index()->eventCount() > 0);
    }

    void stopDuringTheDemoKeepsTheTrace()
    {
        MainWindow window(false);
        DemoOptions demo;
        demo.batches = 2;
        demo.wallSeconds = 10;
        QSignalSpy updated(window.runs(), &RunController::runUpdated);
        QSignalSpy idle(window.runs(), &RunController::idle);
        window.startDemo(demo);
        QVERIFY(updated.wait(5000));
        QTest::qWait(300);
        QElapsedTimer clock;
        clock.start();
        window.stopRuns();
        QVERIFY(idle.wait(1000));
        QVERIFY(clock.elapsed() < 1000);
        QApplication::processEvents();
        const TimelineIndex* kept = window.compare()->timeline(0)->index();
        QVERIFY(kept && kept->eventCount() > 0);
        QVERIFY(window.compare()->timeline(1)->index() == nullptr); // the queued 1F1B run never started
    }

    void sliderSwitchesToPrediction()
    {
        MainWindow window(false);
        window.resize(1400, 900);
        window.show();
        QSignalSpy predicted(window.engine(), &PredictionEngine::predicted);
        window.tuning()->accumSlider()->setValue(4);
        QVERIFY(predicted.wait(5000));
        const auto p = predicted.last().at(0).value<PredictionPtr>();
        QCOMPARE(window.compare()->timeline(0)->index(), p->primary.index.get());
        QCOMPARE(
            window.compare()->model()->runs().at(0).label, std::string("PACI a=4 b=8 · predicted")); // labelled as such
    }

    void exportsWriteReadableFiles()
    {
        QTemporaryDir dir;
        WhatIfConfig config;
        config.run.pipeline.microbatches = 16;
        config.run.pipeline.microBatchSize = 4;
        // TOML round trip (what QSettings keeps and what cluster jobs run).
        const auto back = configFromToml(configToToml(config));
        QVERIFY(back.has_value());
        QCOMPARE(back->accum(), 16);
        QCOMPARE(back->microBatchSize(), 4);
        QCOMPARE(back->schedule(), std::string("paci"));
        QString error;
        QVERIFY(!configFromToml(QStringLiteral("[pipeline]\nstages = -3\n"), &error).has_value());
        QVERIFY(!error.isEmpty());
        // Every engine export format is offered; TOML and torchrun write files.
        QVERIFY(configExportFilters().size() >= 2);
        QCOMPARE(formatOfFilter(configExportFilters().first()), QStringLiteral("toml"));
        const QString toml = dir.filePath(QStringLiteral("tuned.toml"));
        QVERIFY2(exportConfig(config, QStringLiteral("toml"), toml, &error), qPrintable(error));
        auto loaded = bs::runtime::loadRunConfig(fromQt(toml));
        QVERIFY(loaded);
        QCOMPARE(loaded->pipeline.accum, 16);
        QVERIFY(!exportConfig(config, QStringLiteral("no-such-format"), dir.filePath(QStringLiteral("x")), &error));
        // File > Export: every format into one folder, and a report naming each file (issue 32).
        QString report;
        const QString all = dir.filePath(QStringLiteral("all"));
        QVERIFY2(exportAllFormats(toExportConfig(config), all, &report, &error), qPrintable(error));
        for (const auto& f : bs::runtime::exportFormats()) {
            const QString file = QDir(all).filePath(toQt(f.suggestedFileName));
            QVERIFY2(QFileInfo::exists(file) || report.contains(QStringLiteral("skipped ") + toQt(f.name)),
                qPrintable(file));
            QVERIFY2(report.contains(toQt(f.name)), qPrintable(report));
        }
        // The trace round-trips through the engine's Chrome JSON reader.
        auto run = predictRun(config, "paci");
        QVERIFY(run);
        const QString tracePath = dir.filePath(QStringLiteral("trace.json"));
        QVERIFY2(exportTrace(*run->result.trace, tracePath, &error), qPrintable(error));
        auto read = bs::profiler::readChromeTraceFile(fromQt(tracePath));
        QVERIFY(read);
        QCOMPARE(read->events.size(), run->result.trace->size());
    }

    void opensARunDirectory()
    {
        // A run directory as the runtime writes it: config.toml, trace.json, metrics.jsonl.
        QTemporaryDir dir;
        WhatIfConfig config;
        config.batches = 2;
        auto rc = toRunConfig(config);
        rc.training.steps = 2;
        auto run = predictRun(config, "paci");
        QVERIFY(run);
        QString error;
        QVERIFY(
            bs::writeFileAtomic(fromQt(dir.filePath(QStringLiteral("config.toml"))), bs::runtime::toToml(rc)));
        QVERIFY(exportTrace(*run->result.trace, dir.filePath(QStringLiteral("trace.json")), &error));
        QVERIFY(bs::writeFileAtomic(fromQt(dir.filePath(QStringLiteral("metrics.jsonl"))),
            "{\"step\":0,\"train_loss\":5.5,\"virtual_time_s\":0.1}\n"
            "{\"step\":1,\"train_loss\":5.1,\"virtual_time_s\":0.2}\n"));
        MainWindow window(false);
        window.resize(1400, 900);
        QVERIFY2(window.openRunDirectory(dir.path(), &error), qPrintable(error));
        const TimelineIndex* index = window.compare()->timeline(0)->index();
        QVERIFY(index);
        QCOMPARE(index->eventCount(), run->result.trace->size());
        const auto& summary = window.compare()->model()->runs().at(0);
        QCOMPARE(summary.bubbleFraction, run->result.report.bubbleFraction); // same trace, same analysis
        QVERIFY(!window.openRunDirectory(dir.filePath(QStringLiteral("missing")), &error));
        QVERIFY(!error.isEmpty());
        // recent/files was saved and never read: File > Open recent now lists it, newest first.
        QCOMPARE(MainWindow::recentFiles().value(0), dir.path());
        Q_EMIT window.recentMenu()->aboutToShow();
        QVERIFY(!window.recentMenu()->actions().isEmpty());
        QCOMPARE(window.recentMenu()->actions().at(0)->text(), dir.path());
    }

    // Issue 14: a killed run (SIGKILL, OOM) has good loss curves but no trace.json; the GUI refused
    // it. Its trace chunks (trace.partial.json, never closed) open, and the status bar says so.
    void opensARunThatWasCutShort()
    {
        QTemporaryDir dir;
        WhatIfConfig config;
        config.batches = 2;
        auto rc = toRunConfig(config);
        auto run = predictRun(config, "paci");
        QVERIFY(run);
        QVERIFY(bs::writeFileAtomic(fromQt(dir.filePath(QStringLiteral("config.toml"))), bs::runtime::toToml(rc)));
        const std::string partial = bs::profiler::chromeTraceHead(run->result.trace->meta())
            + bs::profiler::chromeTraceChunk(*run->result.trace, 0, run->result.trace->size(),
                run->result.trace->meta().stages == 0);
        QVERIFY(bs::writeFileAtomic(fromQt(dir.filePath(QStringLiteral("trace.partial.json"))), partial));
        QVERIFY(bs::writeFileAtomic(fromQt(dir.filePath(QStringLiteral("metrics.jsonl"))),
            "{\"step\":0,\"train_loss\":5.5,\"virtual_time_s\":0.1}\n"));
        MainWindow window(false);
        QString error;
        QVERIFY2(window.openRunDirectory(dir.path(), &error), qPrintable(error));
        QCOMPARE(window.compare()->timeline(0)->index()->eventCount(), run->result.trace->size());
        QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("cut short")));
    }

    void panelsExportAsPngAndValidSvg()
    {
        MainWindow window(false);
        window.resize(1400, 900);
        window.show();
        DemoOptions demo;
        demo.batches = 2;
        QVERIFY(window.runDemoToEnd(demo));
        QTemporaryDir dir;
        QString error;
        QVERIFY2(window.exportPanelsTo(dir.path(), &error), qPrintable(error));
        for (const char* name : {"timelines", "bubbles", "memory", "lag", "loss", "drift", "throughput"}) {
            QVERIFY2(QFileInfo(dir.filePath(QLatin1String(name) + QStringLiteral(".png"))).size() > 0, name);
        }
        QFile svg(dir.filePath(QStringLiteral("bubbles.svg")));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray text = svg.readAll();
        QXmlStreamReader xml(text);
        bool sawSvg = false;
        int shapes = 0; // vector drawing elements
        QStringList names;
        QString allText;
        while (!xml.atEnd()) {
            xml.readNext();
            if (xml.isStartElement()) {
                sawSvg = sawSvg || xml.name() == QStringLiteral("svg");
                names << xml.name().toString();
                for (const char* shape : {"path", "rect", "polyline", "polygon", "line"}) {
                    shapes += xml.name() == QLatin1String(shape) ? 1 : 0;
                }
            } else if (xml.isCharacters()) {
                allText += xml.text();
            }
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(sawSvg);
        QVERIFY2(shapes > 20, qPrintable(names.join(QLatin1Char(' ')))); // bars, axes and grid are vector paths, not one bitmap
        // The title is text in the SVG (its start: a long one is elided at this width).
        const QString title = window.bubbleChart()->chart()->title().left(16);
        QVERIFY2(allText.contains(title), qPrintable(title + QStringLiteral(" // ") + allText.simplified().left(300)));
        // A widget that cannot be written reports the path.
        QVERIFY(!exportSvg(window.bubbleChart(), dir.filePath(QStringLiteral("no/such/dir/x.svg")), &error));
        QVERIFY(error.contains(QStringLiteral("x.svg")));
    }

    void openedRunFillsTheMetricPanelsAndCalibratesTheSliders()
    {
        // A run measured on another machine (H100 profile) with training metrics and a target.
        QTemporaryDir dir;
        WhatIfConfig measured;
        measured.deviceProfile = "h100";
        measured.batches = 3;
        auto rc = toRunConfig(measured);
        rc.training.steps = 3;
        rc.training.targetLoss = 5.0;
        auto run = predictRun(measured, "paci");
        QVERIFY(run);
        QString error;
        QVERIFY(bs::writeFileAtomic(fromQt(dir.filePath(QStringLiteral("config.toml"))), bs::runtime::toToml(rc)));
        QVERIFY(exportTrace(*run->result.trace, dir.filePath(QStringLiteral("trace.json")), &error));
        QVERIFY(bs::writeFileAtomic(fromQt(dir.filePath(QStringLiteral("metrics.jsonl"))),
            "{\"step\":0,\"train_loss\":5.5,\"virtual_time_s\":0.1,\"wall_time_s\":1.0,\"tokens_per_s_virtual\":900,"
            "\"per_stage\":[{\"mean_drift\":0.01},{\"mean_drift\":0.03}]}\n"
            "{\"step\":1,\"train_loss\":5.1,\"val_loss\":5.2,\"virtual_time_s\":0.2,\"wall_time_s\":2.0}\n"
            "{\"step\":2,\"train_loss\":4.8,\"val_loss\":4.9,\"virtual_time_s\":0.3,\"wall_time_s\":3.0}\n"));
        MainWindow window(false);
        window.resize(1400, 900);
        window.show();
        QVERIFY(!window.calibration());
        QVERIFY2(window.openRunDirectory(dir.path(), &error), qPrintable(error));

        MetricsPanel* metrics = window.metricsPanel();
        QVERIFY(metrics->hasData());
        QVERIFY(metrics->wallTimeAvailable());
        QVERIFY(metrics->drift()->hasData());
        QVERIFY(metrics->throughput()->hasData());
        // Validation loss first reaches the target 5.0 at step 2 (train loss did at step 2 too).
        QCOMPARE(metrics->loss()->targetTimes().at(0).value(), 0.3);
        // The comparison table's time-to-target is the marker's (virtual time, like the runtime).
        const int targetRow = static_cast<int>(Metric::TimeToTarget);
        QCOMPARE(window.compare()->model()->index(targetRow, 0).data(ComparisonModel::RawValueRole).toDouble(), 0.3);
        metrics->setTimeAxis(TimeAxis::Wall);
        QCOMPARE(metrics->loss()->targetTimes().at(0).value(), 3.0);
        metrics->targetBox()->setValue(5.2); // the user's own target: validation 5.2 at step 1
        QCOMPARE(window.compare()->model()->index(targetRow, 0).data(ComparisonModel::RawValueRole).toDouble(), 0.2);
        QCOMPARE(metrics->loss()->targetTimes().at(0).value(), 2.0); // wall axis

        // Calibrated from the run: the prediction of its own settings matches what it measured.
        QVERIFY(window.calibration());
        QCOMPARE(window.calibration()->stages, 8);
        QTableWidget* check = window.predictionCheck()->table();
        QCOMPARE(check->rowCount(), 3);
        for (int row = 0; row < 3; ++row) {
            const double err = check->item(row, 4)->data(Qt::UserRole).toDouble();
            QVERIFY2(std::abs(err) < 0.02, qPrintable(check->item(row, 1)->text() + QString::number(err)));
        }
        // Slider moves now predict from the measured times, far from the CPU profile's guess.
        QSignalSpy predicted(window.engine(), &PredictionEngine::predicted);
        window.tuning()->accumSlider()->setValue(4);
        QVERIFY(predicted.wait(5000));
        const auto p = predicted.last().at(0).value<PredictionPtr>();
        QVERIFY(p->config.calibration == window.calibration());
        WhatIfConfig plain = p->config;
        plain.calibration = nullptr;
        auto uncalibrated = predictRun(plain, plain.schedule());
        QVERIFY(uncalibrated);
        QVERIFY(p->primary.result.report.makespan * 2 < uncalibrated->result.report.makespan);
    }

    void liveDemoCalibratesFromItsOwnTrace()
    {
        if (!liveTrainingAvailable()) {
            QSKIP("built without the LibTorch runtime");
        }
        MainWindow window(false);
        window.resize(1400, 900);
        window.show();
        DemoOptions demo;
        demo.live = true;
        demo.batches = 2;
        QSignalSpy idle(window.runs(), &RunController::idle);
        window.startDemo(demo);
        // The sliders are calibrated once the first global batch is done, before the run ends.
        QTRY_VERIFY_WITH_TIMEOUT(window.calibration() != nullptr, 60'000);
        QCOMPARE(window.predictionCheck()->table()->rowCount(), 0); // the check waits for the end
        QCOMPARE(window.calibration()->stages, 8);
        QVERIFY(idle.wait(100'000));
        QApplication::processEvents();
        // Both live runs recorded both clocks: the wall-time axis is offered.
        QVERIFY(window.metricsPanel()->hasData());
        QVERIFY(window.metricsPanel()->wallTimeAvailable());
        QVERIFY(window.metricsPanel()->throughput()->hasData());
        // Each run's calibrated prediction of its own settings against its measurement.
        QVERIFY(window.calibration());
        QTableWidget* check = window.predictionCheck()->table();
        QCOMPARE(check->rowCount(), 6);
        for (int row = 0; row < check->rowCount(); ++row) {
            qInfo("%s | %s | predicted %s | measured %s | error %s", qPrintable(check->item(row, 0)->text()),
                qPrintable(check->item(row, 1)->text()), qPrintable(check->item(row, 2)->text()),
                qPrintable(check->item(row, 3)->text()), qPrintable(check->item(row, 4)->text()));
            // Measured times replayed: within a loose band (per-action variance and contention on a
            // shared CPU make real runs slower than their means predict).
            QVERIFY2(std::abs(check->item(row, 4)->data(Qt::UserRole).toDouble()) < 0.5,
                qPrintable(check->item(row, 1)->text()));
        }
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
