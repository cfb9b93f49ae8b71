// Issue 30, "acting on the tuner works": Train live trains the tuning panel's settings (a Suggest
// row applied, not the demo again) next to the runs shown; four runs stay on screen until the user
// removes one (File ▸ Open never replaces one); settings the runtime would refuse are refused in
// the what-if, beside their control, by Train live and by Suggest, with the runs shown untouched;
// a run with a live Apply counts each global batch at the m·b in force then.
#include "runtime/plan/config/config_validate.h"
#include "ui/compare/compare_view.h"
#include "ui/shell/main_window.h"
#include "ui/timeline/timeline_view.h"
#include "ui/tuning/tuning_panel.h"

#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>

#include "laptop_fixtures.h"

using namespace bs::ui;

namespace {

constexpr QSize kLaptop(1280, 800);

/// Saves the window as users see it when BS_TEST_SCREENSHOTS names a folder (for a look, not a check).
void maybeScreenshot(MainWindow& window, const char* name)
{
    const QByteArray dir = qgetenv("BS_TEST_SCREENSHOTS");
    if (!dir.isEmpty()) {
        QTest::qWait(50); // the layouts settle as on screen
        window.grab().save(
            QString::fromLocal8Bit(dir) + QLatin1Char('/') + QLatin1String(name) + QStringLiteral(".png"));
    }
}

/// The runs shown, by slot ("" where a slot is empty).
QStringList slotLabels(const MainWindow& window)
{
    QStringList labels;
    for (int slot = 0; slot < RunWorkspace::kSlots; ++slot) {
        const auto& run = window.workspace()->slot(slot);
        labels << (run ? QString::fromStdString(run->plan.label) : QString());
    }
    return labels;
}

} // namespace

class TestTunerActions : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init() { QVERIFY(m_dir.isValid()); }

    void trainLiveTrainsThePanelsSettingsBesideTheRunsShown()
    {
        if (!liveTrainingAvailable()) {
            QSKIP("built without the training runtime");
        }
        MainWindow window(false);
        window.resize(kLaptop);
        window.show();
        QString error;
        for (const char* schedule : {"paci", "1f1b"}) {
            const QString dir = m_dir.filePath(QStringLiteral("train-") + QLatin1String(schedule));
            QVERIFY(test::writeRunDir(dir, schedule, 4));
            QVERIFY2(window.openRunDirectory(dir, &error), qPrintable(error));
        }
        const QStringList opened = slotLabels(window);
        // A Suggest row applied: settings the demo never trains (not a = 8, b = 8).
        TuningPanel* panel = window.tuning();
        WhatIfConfig start;
        start.run.pipeline.stages = 4;
        panel->setConfig(start);
        QSignalSpy ready(panel, &TuningPanel::suggestionsReady);
        panel->suggest();
        QVERIFY(ready.wait(60'000));
        QTableWidget* rows = panel->suggestions();
        int row = -1;
        for (int r = 0; r < rows->rowCount() && row < 0; ++r) {
            if (rows->item(r, 0)->text() != QLatin1String("8") || rows->item(r, 1)->text() != QLatin1String("8")) {
                row = r;
            }
        }
        QVERIFY2(row >= 0, "Suggest listed only the demo's a = 8, b = 8");
        Q_EMIT rows->cellDoubleClicked(row, 0);
        const WhatIfConfig panelSettings = panel->config();
        QCOMPARE(panelSettings.run.pipeline.microbatches, rows->item(row, 0)->text().toInt());
        QCOMPARE(panelSettings.run.pipeline.microBatchSize, rows->item(row, 1)->text().toInt());

        QSignalSpy started(window.runs(), &RunController::runStarted);
        window.trainLiveAction()->trigger();
        QVERIFY(started.wait(60'000));
        QTest::qWait(20);
        int trained = -1;
        for (int slot = 0; slot < RunWorkspace::kSlots; ++slot) {
            if (window.workspace()->slot(slot) && !window.workspace()->slot(slot)->finished()) {
                trained = slot;
            }
        }
        QCOMPARE(trained, 2); // the first free slot: the opened runs stay where they were
        const bs::runtime::RunConfig& launched = window.workspace()->slot(trained)->config;
        const bs::runtime::RunConfig wanted = toRunConfig(panelSettings);
        QCOMPARE(launched.schedule.name, wanted.schedule.name);
        QCOMPARE(launched.pipeline.stages, 4);
        QCOMPARE(launched.pipeline.microbatches, wanted.pipeline.microbatches);
        QCOMPARE(launched.pipeline.accum, wanted.pipeline.accum);
        QCOMPARE(launched.pipeline.microBatchSize, wanted.pipeline.microBatchSize);
        QCOMPARE(launched.model.preset, wanted.model.preset);
        QCOMPARE(launched.model.shape.layers, wanted.model.shape.layers);
        QCOMPARE(launched.device.name, wanted.device.name);
        QCOMPARE(launched.training.steps, panelSettings.batches);
        const QStringList now = slotLabels(window);
        QCOMPARE(now.mid(0, 2), opened.mid(0, 2));
        QVERIFY(window.compare()->timeline(0)->index() != nullptr);
        QVERIFY(window.compare()->timeline(1)->index() != nullptr);
        maybeScreenshot(window, "train-live");
        QSignalSpy idle(window.runs(), &RunController::idle);
        window.stopRuns();
        QVERIFY(idle.wait(60'000));
    }

    void fourRunsStayUntilTheUserRemovesOne()
    {
        MainWindow window(false);
        window.resize(kLaptop);
        window.show();
        QString error;
        const char* schedules[] = {"paci", "1f1b", "gpipe", "zb-h1", "pipedream"};
        for (int i = 0; i < 4; ++i) {
            const QString dir = m_dir.filePath(QStringLiteral("four-") + QLatin1String(schedules[i]));
            QVERIFY(test::writeRunDir(dir, schedules[i], 4));
            QVERIFY2(window.openRunDirectory(dir, &error), qPrintable(error));
            QVERIFY(window.compare()->slotShown(i));
        }
        const QStringList four = slotLabels(window);
        QVERIFY(!four.contains(QString()));
        // A fifth: refused, naming the way out; no run replaced.
        const QString fifth = m_dir.filePath(QStringLiteral("four-pipedream"));
        QVERIFY(test::writeRunDir(fifth, "pipedream", 4));
        QVERIFY(!window.openRunDirectory(fifth, &error));
        QVERIFY2(error.contains(QStringLiteral("Remove run")), qPrintable(error));
        QCOMPARE(slotLabels(window), four);
        // Neither does a demo or Train live take a run's place.
        QVERIFY(!window.startDemo(DemoOptions{}));
        QCOMPARE(slotLabels(window), four);
        QVERIFY(!window.runs()->isBusy());
        maybeScreenshot(window, "four-runs");

        // Run ▸ Remove run on the selected run: only that one goes; the fifth then opens there.
        window.selectSlot(1);
        window.removeRunAction()->trigger();
        QVERIFY(!window.workspace()->slot(1));
        QVERIFY(!window.compare()->slotShown(1));
        QCOMPARE(slotLabels(window)[0], four[0]);
        QCOMPARE(slotLabels(window)[2], four[2]);
        QCOMPARE(slotLabels(window)[3], four[3]);
        QCOMPARE(window.compare()->model()->columnCount() >= 3, true);
        QVERIFY2(window.openRunDirectory(fifth, &error), qPrintable(error));
        QVERIFY(window.workspace()->slot(1));
        QVERIFY(window.compare()->slotShown(1));
        // Removing every run brings the what-if's predictions back.
        for (int slot = 0; slot < RunWorkspace::kSlots; ++slot) {
            QVERIFY2(window.removeRun(slot, &error), qPrintable(error));
        }
        QVERIFY(!window.workspace()->showsRuns());
        QVERIFY(!window.removeRun(0, &error));
    }

    void refusedSettingsAreRefusedBesideTheirControl()
    {
        MainWindow window(false);
        window.resize(kLaptop);
        window.show();
        QString error;
        const QString dir = m_dir.filePath(QStringLiteral("refused-paci"));
        QVERIFY(test::writeRunDir(dir, "paci", 4));
        QVERIFY2(window.openRunDirectory(dir, &error), qPrintable(error));
        const TimelineIndex* shown = window.compare()->timeline(0)->index();
        QVERIFY(shown != nullptr);
        TuningPanel* panel = window.tuning();
        for (const char* schedule : {"dualpipev", "zb-v", "interleaved-1f1b"}) {
            panel->setConfig(WhatIfConfig{}); // the default tiny model (8 layers) at p = 8: 16 model chunks
            QComboBox* box = panel->scheduleBox();
            box->setCurrentIndex(box->findData(QLatin1String(schedule))); // as a user picks it
            const auto& refused = panel->refusal();
            QVERIFY2(refused.has_value(), schedule);
            // Exactly the runtime's validator's reason.
            const bs::Status runtime = bs::runtime::validate(toRunConfig(panel->config()));
            QVERIFY(!runtime.has_value());
            QCOMPARE(refused->message, runtime.error().message);
            QVERIFY2(refused->message.find("16 model chunks") != std::string::npos, refused->message.c_str());
            // Beside the control: the v row, in red, visible on screen (not only the status bar).
            QVERIFY(panel->refusalLabel() != nullptr);
            QVERIFY(panel->refusalLabel()->isVisible());
            QVERIFY(panel->refusalLabel()->text().contains(QStringLiteral("16 model chunks")));
            QCOMPARE(panel->refusedControl(), panel->stagesPerRankSpin()->parentWidget());
            // Not predicted, and the run shown stays.
            QVERIFY(!window.compare()->predictionVisible());
            QCOMPARE(window.compare()->timeline(0)->index(), shown);
            if (liveTrainingAvailable()) {
                QVERIFY(!window.startLiveRun());
                QVERIFY(!window.runs()->isBusy());
                QCOMPARE(window.compare()->timeline(0)->index(), shown);
            }
        }
        maybeScreenshot(window, "refused");
        // Suggest lists no row the runtime would refuse.
        QSignalSpy ready(panel, &TuningPanel::suggestionsReady);
        panel->suggest();
        QVERIFY(ready.wait(60'000));
        for (int r = 0; r < panel->suggestions()->rowCount(); ++r) {
            WhatIfConfig row = panel->config();
            row.run.pipeline.microbatches = panel->suggestions()->item(r, 0)->text().toInt();
            row.run.pipeline.accum = 0;
            row.run.pipeline.microBatchSize = panel->suggestions()->item(r, 1)->text().toInt();
            QVERIFY(panel->preflight(row).has_value());
        }
        QCOMPARE(panel->suggestions()->rowCount(), 0); // 16 chunks at every a and b
        // Back to settings the runtime takes: the note goes, the what-if predicts again.
        panel->scheduleBox()->setCurrentIndex(panel->scheduleBox()->findData(QStringLiteral("paci")));
        QVERIFY(!panel->refusal());
        QVERIFY(panel->refusalLabel() == nullptr);
        QSignalSpy predicted(window.engine(), &PredictionEngine::predicted);
        QVERIFY(predicted.wait(10'000));
        QTRY_VERIFY(window.compare()->predictionVisible());
    }

    void applyCountsEachBatchAtTheSettingsInForce()
    {
        bs::runtime::RunConfig first;
        first.pipeline.microbatches = 8;
        first.pipeline.microBatchSize = 8;
        RunUpdate::AppliedSettings later;
        later.step = 2;
        later.config = first;
        later.config.pipeline.microbatches = 16;
        later.config.pipeline.microBatchSize = 16;
        // 2 batches of 8·8, then 4 of 16·16 (the first settings' figure would be 6·64 = 384).
        QCOMPARE(samplesTrained(first, {later}, 6), 2.0 * 64 + 4.0 * 256);
        QCOMPARE(samplesTrained(first, {}, 6), 6.0 * 64);
        QCOMPARE(samplesTrained(first, {later}, 1), 64.0); // stopped before the Apply took effect
    }

private:
    QTemporaryDir m_dir;
};

int main(int argc, char** argv)
{
    return test::runOnLaptopScreen<TestTunerActions>(argc, argv, kLaptop);
}

#include "tst_tuner_actions.moc"
