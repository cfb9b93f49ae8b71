// RunWorkspace: the run slots and the calibrations, without the window. Opened runs take the first
// free slot and never another run's (issue 30), the first one clears the predictions, selection
// only lands on a slot that holds a run, and each scope's calibration keeps one sample per run at
// one stage count, never touched by another scope's runs.
#include "runtime/plan/sim/simulator.h"
#include "ui/shell/run_workspace.h"

#include <QSignalSpy>
#include <QTest>

using namespace bs::ui;

namespace {

/// A replayed run of `schedule` as an opened one (the simulator's trace as the measurement).
PredictedRun replayed(const std::string& schedule, int stages, const std::string& label)
{
    WhatIfConfig c;
    c.run.pipeline.stages = stages;
    c.baseline.clear();
    c.batches = 2;
    auto run = predictRun(c, schedule);
    return run ? measuredRun(
               label, run->result.schedule, run->result.trace, bs::runtime::analysisOptionsFor(run->result.schedule))
               : PredictedRun{};
}

} // namespace

class TestRunWorkspace : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // The drift the comparison table shows for a slot: a live LibTorch run's latest batch, per model
    // stage with its rank and chunk from the run's placement; an opened run's summary; none for a
    // replay (simulated: the cost model has no tensors).
    void measuredDriftComesFromTheRunsTensors()
    {
        WhatIfConfig c;
        c.run.schedule.name = "paci-interleaved";
        c.run.pipeline.stages = 2;
        c.run.pipeline.microbatches = 4;
        c.run.pipeline.accum = 0;
        c.run.pipeline.stagesPerRank = 2;
        c.baseline.clear();
        c.batches = 1;
        auto plan = predictRun(c, "paci-interleaved");
        QVERIFY(plan);
        RunSlot live{*plan, nullptr, true, false, c.run, {}, {}, {}, {}, {}};
        auto update = std::make_shared<RunUpdate>();
        bs::runtime::BatchMetrics batch;
        for (int s = 0; s < 4; ++s) {
            bs::runtime::StageMetrics m;
            m.stage = s;
            m.driftSamples = 2;
            m.meanDrift = 1e-3 * (3 - s);
            m.maxDrift = 2e-3 * (3 - s);
            batch.stages.push_back(m);
        }
        update->metrics.push_back(batch);
        update->finished = true;
        live.latest = update;
        const bs::runtime::RunDrift drift = live.measuredDrift();
        QVERIFY(drift.measured());
        QCOMPARE(drift.stages.size(), std::size_t(4));
        QCOMPARE(drift.stages[2].rank, 0); // stage 2: rank 0's second chunk (loop placement)
        QCOMPARE(drift.stages[2].chunk, 1);
        QCOMPARE(drift.maxDrift, 6e-3);
        RunSlot replay = live;
        replay.measured = false;
        QVERIFY(!replay.measuredDrift().measured());
        RunSlot opened = live;
        opened.latest = std::make_shared<RunUpdate>();
        bs::runtime::RunDrift summary;
        summary.samples = 1;
        summary.meanDrift = 0.5;
        opened.openedDrift = summary;
        QCOMPARE(opened.measuredDrift().meanDrift, 0.5);
    }

    void openedRunsTakeFreeSlotsAndSelectionNeedsARun()
    {
        RunWorkspace ws;
        QVERIFY(!ws.showsRuns());
        QVERIFY(!ws.select(0)); // nothing there
        const PredictedRun a = replayed("paci", 4, "A");
        QVERIFY(a.index && a.result.trace);
        QVERIFY(a.result.report.bubbleFraction > 0 && !a.result.report.bubbles.empty()); // analysed, spans kept
        bs::runtime::RunConfig config;
        config.training.steps = 6;
        QCOMPARE(ws.placeOpened(a, config), 0);
        QVERIFY(ws.showsRuns());
        QVERIFY(ws.slot(0)->finished() && ws.slot(0)->measured);
        QCOMPARE(ws.slot(0)->config.training.steps, 6);
        QCOMPARE(ws.slot(0)->scope, calibrationScope(config));
        QCOMPARE(ws.placeOpened(replayed("1f1b", 4, "B"), config), 1);
        const int reserved = ws.reserve(); // a live run queued to start
        QCOMPARE(reserved, 2);
        QCOMPARE(ws.placeOpened(replayed("gpipe", 4, "C"), config), 3); // not the reserved slot
        QCOMPARE(ws.freeSlots(), 0);
        QCOMPARE(ws.placeOpened(replayed("zb-h1", 4, "D"), config), -1); // full: nothing replaced
        QCOMPARE(ws.slot(0)->plan.label, std::string("A"));
        QCOMPARE(ws.slot(1)->plan.label, std::string("B"));
        QCOMPARE(ws.slot(3)->plan.label, std::string("C"));
        ws.placeStarted(reserved, a, config, true);
        QVERIFY(!ws.slot(2)->finished() && ws.slot(2)->indexing);
        QVERIFY(ws.select(1));
        QCOMPARE(ws.selected(), 1);
        ws.remove(0);
        QVERIFY(!ws.select(0));
        QCOMPARE(ws.selected(), 1);
        ws.remove(1); // the selected run: none selected
        QCOMPARE(ws.selected(), -1);
        ws.enterRunMode(); // runs shown stay
        QCOMPARE(ws.slot(3)->plan.label, std::string("C"));
        QCOMPARE(ws.placeOpened(replayed("zb-h1", 4, "D"), config), 0);
        ws.remove(0);
        ws.remove(2);
        ws.remove(3);
        QVERIFY(ws.empty());
    }

    void oneCalibrationSamplePerRunAtOneStageCount()
    {
        RunWorkspace ws;
        QSignalSpy changed(&ws, &RunWorkspace::calibrationChanged);
        const auto sampleOf = [](const PredictedRun& run, int b) {
            const auto& params = run.result.schedule.params;
            auto sample = costSampleFromTrace(*run.result.trace, params.stages, b, params.name, run.label);
            return std::move(sample).value();
        };
        const PredictedRun a = replayed("paci", 4, "A");
        const PredictedRun b = replayed("1f1b", 4, "B");
        const std::string tiny = calibrationScope(bs::runtime::RunConfig{});
        QVERIFY(ws.addCalibrationSample(tiny, sampleOf(a, 8)));
        QVERIFY(ws.addCalibrationSample(tiny, sampleOf(b, 8)));
        QVERIFY(ws.addCalibrationSample(tiny, sampleOf(a, 8))); // A again: replaces its sample
        QCOMPARE(changed.count(), 3);
        QVERIFY(ws.calibration());
        QCOMPARE(ws.calibration()->stages, 4);
        QVERIFY(ws.calibration()->sourceFor("1f1b").find("B") != std::string::npos);
        // Another model's run has its own scope: this one's calibration is the same object after it.
        const CalibrationPtr before = ws.calibrationFor(tiny);
        bs::runtime::RunConfig other;
        other.model.shape.layers = 2;
        QVERIFY(calibrationScope(other) != tiny);
        QVERIFY(ws.addCalibrationSample(calibrationScope(other), sampleOf(replayed("paci", 2, "D"), 8)));
        QCOMPARE(ws.calibrationFor(tiny), before);
        QCOMPARE(ws.calibrationFor(calibrationScope(other))->stages, 2);
        QCOMPARE(ws.calibrationFor(tiny)->stages, 4);
        // A run at another stage count starts the calibration over (a per-stage fit cannot mix them).
        QVERIFY(ws.addCalibrationSample(tiny, sampleOf(replayed("paci", 2, "C"), 8)));
        QCOMPARE(ws.calibration()->stages, 2);
        QVERIFY(ws.calibration()->sourceFor("1f1b").find("B") == std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestRunWorkspace)
#include "tst_run_workspace.moc"
