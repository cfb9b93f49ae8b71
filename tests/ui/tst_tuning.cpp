// What-if tuning: moving a slider re-runs the simulator (debounced, off the UI thread) and changes
// the predicted figures; predictions match a direct simulate() of the same settings.
#include "runtime/schedule/catalogue.h"
#include "runtime/schedule/limits.h"
#include "ui/tuning/prediction_engine.h"
#include "ui/tuning/tuning_panel.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>

using namespace bs::ui;

class TestTuning : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void panelOffersEveryCatalogueSchedule()
    {
        TuningPanel panel;
        QCOMPARE(panel.scheduleBox()->count(), static_cast<int>(bs::runtime::scheduleCatalogue().size()));
        QCOMPARE(panel.config().schedule(), std::string("paci"));
        QCOMPARE(panel.config().globalBatch(), 64);
    }

    void sliderMoveChangesThePrediction()
    {
        TuningPanel panel;
        PredictionEngine engine;
        connect(&panel, &TuningPanel::configChanged, &engine, &PredictionEngine::request);
        QSignalSpy predicted(&engine, &PredictionEngine::predicted);
        QSignalSpy failed(&engine, &PredictionEngine::predictionFailed);

        engine.request(panel.config());
        QVERIFY(predicted.wait(5000));
        const auto before = predicted.last().at(0).value<PredictionPtr>();
        QCOMPARE(before->config.accum(), 8);
        QCOMPARE(before->primary.lagBound, 1); // PACI p=8 a=8: ⌈7/8⌉

        panel.accumSlider()->setValue(2); // a = 2: more frequent updates, more drift
        QVERIFY(predicted.wait(5000));
        const auto after = predicted.last().at(0).value<PredictionPtr>();
        QCOMPARE(failed.count(), 0);
        QCOMPARE(after->config.accum(), 2);
        QCOMPARE(after->primary.lagBound, 4); // ⌈7/2⌉
        QVERIFY(after->primary.result.report.makespan != before->primary.result.report.makespan);
        QVERIFY(after->baseline.has_value());
        // Flush pays a pipeline fill and drain per global batch: fewer micro-batches, more bubble.
        QVERIFY(after->baseline->result.report.bubbleFraction > before->baseline->result.report.bubbleFraction);
    }

    void rapidMovesCollapseIntoTheNewest()
    {
        TuningPanel panel;
        PredictionEngine engine;
        connect(&panel, &TuningPanel::configChanged, &engine, &PredictionEngine::request);
        QSignalSpy predicted(&engine, &PredictionEngine::predicted);
        for (int b = 1; b <= 16; ++b) {
            panel.microBatchSlider()->setValue(b);
        }
        QTRY_VERIFY_WITH_TIMEOUT(!engine.isBusy(), 10000);
        QVERIFY(predicted.count() >= 1);
        QVERIFY(predicted.count() < 16); // debounced: not one simulation per step
        QCOMPARE(engine.latest()->config.microBatchSize(), 16);
    }

    void predictionMatchesDirectSimulation()
    {
        WhatIfConfig config;
        config.run.pipeline.microbatches = 4;
        config.run.pipeline.microBatchSize = 2;
        auto prediction = predict(config);
        QVERIFY(prediction);
        auto scenario = scenarioFor(config, "paci");
        QVERIFY(scenario);
        auto request = bs::runtime::makeGptRequest(*scenario);
        QVERIFY(request);
        auto direct = bs::runtime::simulate(*request);
        QVERIFY(direct);
        QCOMPARE((*prediction)->primary.result.report.makespan, direct->report.makespan);
        QCOMPARE((*prediction)->primary.result.throughputSamplesPerSecond, direct->throughputSamplesPerSecond);
        QCOMPARE((*prediction)->primary.index->eventCount(), direct->trace->size());
    }

    // One settings vocabulary: the panel holds a RunConfig, so a run's whole configuration (steps,
    // optimizer, an explicit model shape, a GPU it trained on, PACI's a != m) survives being shown
    // and comes back unchanged from config() (File > Export, live Apply); the old mirror type kept
    // only schedule, p, a = m, b and reset the rest to defaults.
    void panelKeepsAWholeRunConfig()
    {
        bs::runtime::RunConfig rc = defaultWhatIfRun();
        rc.schedule.name = "paci";
        rc.pipeline.stages = 4;
        rc.pipeline.microbatches = 8;
        rc.pipeline.accum = 4;
        rc.pipeline.microBatchSize = 3;
        rc.training.steps = 6;
        rc.optimizer.lr = 1e-3;
        rc.model.preset = "";
        rc.model.shape.layers = 6;
        rc.device.name = "cuda:7";
        TuningPanel panel;
        panel.setConfig(fromRunConfig(rc));
        QCOMPARE(panel.accumSlider()->value(), 4); // the window a
        QVERIFY(toRunConfig(panel.config()) == rc);
        // Moving the slider sets a = m; the rest stays the run's.
        panel.accumSlider()->setValue(2);
        const bs::runtime::RunConfig moved = toRunConfig(panel.config());
        QCOMPARE(moved.pipeline.microbatches, 2);
        QCOMPARE(moved.pipeline.accum, 2);
        QCOMPARE(moved.training.steps, 6);
        QCOMPARE(moved.model.shape.layers, 6);
        QCOMPARE(moved.device.name, std::string("cuda:7"));
        // A schedule without a window: a = m, accum not written (the validator rejects it there).
        panel.scheduleBox()->setCurrentIndex(panel.scheduleBox()->findData(QStringLiteral("1f1b")));
        QCOMPARE(toRunConfig(panel.config()).pipeline.accum, 0);
    }

    void stageLimitsAreTheValidatorsOnes()
    {
        TuningPanel panel;
        auto* stages = panel.findChild<QSpinBox*>(QStringLiteral("stagesSpin"));
        QVERIFY(stages);
        QCOMPARE(stages->minimum(), 1);
        QCOMPARE(stages->maximum(), bs::runtime::limits::kMaxStages);
    }

    void badSettingsReportAnError()
    {
        PredictionEngine engine;
        QSignalSpy failed(&engine, &PredictionEngine::predictionFailed);
        WhatIfConfig config;
        config.run.model.preset = "no-such-model";
        engine.predictNow(config);
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.at(0).at(0).toString().contains(QStringLiteral("no-such-model")));
    }

    void suggestFillsTheTableAndApplies()
    {
        TuningPanel panel;
        QSignalSpy ready(&panel, &TuningPanel::suggestionsReady);
        QSignalSpy changed(&panel, &TuningPanel::configChanged);
        panel.suggest();
        QVERIFY(ready.wait(30000));
        QVERIFY(panel.suggestions()->rowCount() > 0);
        const int a = panel.suggestions()->item(0, 0)->text().toInt();
        QVERIFY(a >= 7); // default drift bound 1 update
        Q_EMIT panel.suggestions()->cellDoubleClicked(0, 0);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(panel.config().accum(), a);
    }
};

QTEST_MAIN(TestTuning)
#include "tst_tuning.moc"
