// What-if tuning: moving a slider re-runs the simulator (debounced, off the UI thread) and changes
// the predicted figures; predictions match a direct simulate() of the same settings.
#include "runtime/plan/config/config_validate.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/limits.h"
#include "ui/tuning/prediction_engine.h"
#include "ui/tuning/tuning_panel.h"

#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>

#include "suggest_check.h"

using namespace bs::ui;

namespace {

// The what-if settings of a run: schedule, p, m, a (0 = m) and b; the rest the defaults.
WhatIfConfig runSettings(const std::string& schedule, int stages, int microbatches, int accum, int microBatchSize)
{
    WhatIfConfig c;
    c.run.schedule.name = schedule;
    c.run.pipeline.stages = stages;
    c.run.pipeline.microbatches = microbatches;
    c.run.pipeline.accum = accum;
    c.run.pipeline.microBatchSize = microBatchSize;
    return c;
}

} // namespace

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

    // An opened PACI run with a != m (m = 16, a = 4) is predicted at its own m: what Run trains
    // and what the what-if simulates are the same schedule (it simulated m = 4 before, whose fill
    // and drain weigh 4x more: 44 % bubble against the run's 34 % at p = 8 on the tiny model).
    void windowedRunIsPredictedAtItsOwnMicrobatches()
    {
        const WhatIfConfig config = runSettings("paci", 8, 16, 4, 2);
        QCOMPARE(toRunConfig(config).pipeline.microbatches, 16);
        auto prediction = predict(config);
        QVERIFY(prediction);
        QCOMPARE((*prediction)->primary.result.schedule.params.microbatches, 16);
        QCOMPARE((*prediction)->primary.result.schedule.params.accum, 4);
        QVERIFY((*prediction)->baseline.has_value());
        QCOMPARE((*prediction)->baseline->result.schedule.params.microbatches, 4); // 1F1B at G = a·b
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

    // PACI interleaved needs m a multiple of p, with a dividing m. The what-if simulated m = a, so
    // at p = 4, v = 2, a = 2 every prediction failed ("microbatches ... a multiple of stages (4)");
    // now it simulates the fewest m the catalogue accepts (4) with the window a = 2 and equals the
    // explicit run (m = 4, a = 2) to the last digit; the flush baseline at a = m grows to m = 4.
    void paciInterleavedPredictsAWindowBelowP()
    {
        TuningPanel panel;
        WhatIfConfig c = runSettings("paci-interleaved", 4, 8, 0, 2);
        c.run.pipeline.stagesPerRank = 2;
        c.baseline = "interleaved-1f1b";
        c.batches = 4;
        panel.setConfig(c);
        panel.accumSlider()->setValue(2);
        QCOMPARE(panel.accumSlider()->value(), 2); // every window is allowed: m follows it
        const WhatIfConfig shown = panel.config();
        QCOMPARE(shown.accum(), 2);
        {
            const auto valid = bs::runtime::validate(toRunConfig(shown)); // what Run and Export write
            QVERIFY2(valid, valid ? "" : valid.error().describe().c_str());
        }
        PredictionEngine engine;
        QSignalSpy predicted(&engine, &PredictionEngine::predicted);
        QSignalSpy failed(&engine, &PredictionEngine::predictionFailed);
        engine.predictNow(shown);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
        QCOMPARE(predicted.count(), 1);
        const auto prediction = predicted.at(0).at(0).value<PredictionPtr>();
        QCOMPARE(prediction->primary.result.schedule.params.microbatches, 4);
        QCOMPARE(prediction->primary.result.schedule.params.accum, 2);
        QCOMPARE(prediction->primary.label, std::string("PACI interleaved a=2 b=2 v=2"));
        QVERIFY(prediction->baseline.has_value());
        QCOMPARE(prediction->baseline->label, std::string("Interleaved 1F1B a=4 b=2 v=2"));

        bs::runtime::SimulationRequest explicitRun; // bubblescope-cli simulate -s paci-interleaved -p 4 -m 4 -a 2 -v 2
        explicitRun.schedule.name = "paci-interleaved";
        explicitRun.schedule.stages = 4;
        explicitRun.schedule.microbatches = 4;
        explicitRun.schedule.accum = 2;
        explicitRun.schedule.batches = 4;
        explicitRun.schedule.stagesPerRank = 2;
        explicitRun.microBatchSize = 2;
        auto device = bs::runtime::deviceProfile("cpu");
        QVERIFY(device);
        auto costs = bs::runtime::costModelFromGpt(shown.run.model.shape, 8, 2, *device); // one cost per chunk: p·v
        QVERIFY(costs);
        explicitRun.costs = *costs;
        const auto direct = bs::runtime::simulate(explicitRun);
        QVERIFY(direct);
        const double want = direct->throughputSamplesPerSecond;
        QVERIFY(want > 0);
        QVERIFY(std::abs(prediction->primary.result.throughputSamplesPerSecond - want) <= 1e-9 * want);
        QCOMPARE(prediction->primary.result.report.makespan, direct->report.makespan);
    }

    // Where a = m (interleaved 1F1B: m a multiple of p; DualPipeV: m >= 2p; 2bw: m >= p - 1) the
    // slider takes only what the schedule runs, snapping the way it moved, and the note names the
    // rule; PACI interleaved takes every a and the note says the m it simulates. Every position of
    // the slider, for every schedule, predicts without an error.
    void sliderTakesOnlyWhatTheScheduleRuns()
    {
        TuningPanel panel;
        QLabel* note = panel.accumRuleLabel();
        QSlider* a = panel.accumSlider();
        auto* stages = panel.findChild<QSpinBox*>(QStringLiteral("stagesSpin"));
        stages->setValue(4);
        QVERIFY(note->isHidden()); // paci: no rule on m
        panel.scheduleBox()->setCurrentIndex(panel.scheduleBox()->findData(QStringLiteral("interleaved-1f1b")));
        QVERIFY(!note->isHidden());
        QVERIFY2(note->text().contains(QStringLiteral("a multiple of p = 4")), qPrintable(note->text()));
        a->setValue(4);
        a->setValue(5);
        QCOMPARE(a->value(), 8); // moving up: the next multiple of p
        a->setValue(7);
        QCOMPARE(a->value(), 4); // moving down: the one below
        QCOMPARE(panel.config().run.pipeline.microbatches, 4);
        stages->setValue(3);
        QCOMPARE(a->value() % 3, 0); // another p: a snaps to its multiples
        panel.scheduleBox()->setCurrentIndex(panel.scheduleBox()->findData(QStringLiteral("dualpipev")));
        QCOMPARE(a->minimum(), 6);
        QVERIFY2(note->text().contains(QStringLiteral("at least 2·p = 6")), qPrintable(note->text()));
        panel.scheduleBox()->setCurrentIndex(panel.scheduleBox()->findData(QStringLiteral("paci-interleaved")));
        a->setValue(2);
        QCOMPARE(a->value(), 2);
        QVERIFY2(note->text().contains(QStringLiteral("simulates m = 6 per batch")), qPrintable(note->text()));

        for (const auto& info : bs::runtime::scheduleCatalogue()) {
            panel.scheduleBox()->setCurrentIndex(panel.scheduleBox()->findData(QString::fromStdString(info.name)));
            for (int p : {3, 4}) {
                stages->setValue(p);
                for (int want = 1; want <= 20; ++want) {
                    a->setValue(want);
                    WhatIfConfig c = panel.config();
                    c.baseline = "interleaved-1f1b"; // a = m baselines grow m to what they take
                    c.batches = 1;
                    const auto prediction = predict(c);
                    QVERIFY2(prediction,
                        prediction ? ""
                                   : (info.name + " p=" + std::to_string(p) + " a=" + std::to_string(a->value()) + ": "
                                       + prediction.error().describe())
                                         .c_str());
                    const auto valid = bs::runtime::validate(toRunConfig(c));
                    QVERIFY2(valid, valid ? "" : (info.name + ": " + valid.error().describe()).c_str());
                    if (!info.takesAccumWindow()) {
                        QCOMPARE((*prediction)->primary.result.schedule.params.microbatches, a->value());
                    } else {
                        QCOMPARE((*prediction)->primary.result.schedule.params.accum, a->value());
                    }
                }
            }
        }
    }

    // Suggest lists only settings the schedule runs: interleaved 1F1B at p = 3 searches multiples of
    // p, PACI interleaved every window (a below p too); an applied row predicts what it listed (the
    // steady throughput Suggest ranks by).
    void suggestListsOnlyValidSettings()
    {
        for (const char* name : {"interleaved-1f1b", "paci-interleaved"}) {
            TuningPanel panel;
            WhatIfConfig c;
            c.run.schedule.name = name;
            c.run.pipeline.stages = 3;
            c.run.pipeline.stagesPerRank = 2;
            c.run.pipeline.microbatches = 6;
            c.baseline.clear();
            c.batches = 2;
            panel.setConfig(c);
            // Max drift 16: let every window through.
            panel.findChild<QSpinBox*>(QStringLiteral("maxLagSpin"))->setValue(16);
            QSignalSpy ready(&panel, &TuningPanel::suggestionsReady);
            panel.suggest();
            QVERIFY(ready.wait(60000));
            QTableWidget* table = panel.suggestions();
            QVERIFY(table->rowCount() > 0);
            const auto* info = bs::runtime::findSchedule(name);
            for (int row = 0; row < table->rowCount(); ++row) {
                const int listed = table->item(row, 0)->text().toInt();
                QVERIFY(info->takesAccumWindow() || info->acceptsMicrobatches(3, listed, 0));
            }
            // Every a searched was one it runs: none refused (a = 1, 2 were, for PACI interleaved).
            QString status;
            for (const QLabel* label : panel.findChildren<QLabel*>()) {
                status = label->text().contains(QStringLiteral("simulated (")) ? label->text() : status;
            }
            QVERIFY2(
                status.startsWith(QString::number(info->takesAccumWindow() ? 30 : 25) + QStringLiteral(" simulated")),
                qPrintable(status)); // 6 a (5 distinct multiples of p for interleaved 1F1B) x 5 b
            QVERIFY2(!status.contains(QStringLiteral("by the schedule")), qPrintable(status));
            Q_EMIT table->cellDoubleClicked(0, 0);
            const WhatIfConfig applied = panel.config();
            QCOMPARE(applied.accum(), table->item(0, 0)->text().toInt());
            const auto again = bs::ui::test::suggestedThroughputAt(panel, applied);
            QVERIFY(again);
            const double listed = table->item(0, TuningPanel::kColThroughput)->data(Qt::UserRole).toDouble();
            QVERIFY(std::abs(*again - listed) <= 1e-9 * listed);
        }
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
