// Live Apply through the bridge: RunController::apply() reaches the running RunSessionBackend,
// the run changes its settings at a global-batch boundary and finishes every step; the timeline
// shows the change as a marker. MainWindow's Apply action is enabled only for a live run.
#include "ui/bridge/run_controller.h"
#include "ui/bridge/simulated_backend.h"
#include "ui/compare/compare_view.h"
#include "ui/shell/main_window.h"
#include "ui/timeline/timeline_view.h"
#include "ui/tuning/prediction_check_view.h"
#include "ui/tuning/tuning_panel.h"
#ifdef BS_HAVE_RUN_SESSION
#include "ui/bridge/run_session_backend.h"
#endif

#include "tests/support/tiny_run_config.h"

#include <QAction>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>

using namespace bs::ui;

class TestLiveApply : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void traceMarkersCarryTheirLabels();
    void markersArePaintedAtTheirTime();
    void applyWithoutALiveRunIsRefused();
    void applyChangesTheLiveRunAtABatchBoundary();
    void mainWindowApplyMarksTheLiveTimeline();
    void resumeRunDirectoryContinuesFromItsCheckpoint();
};

void TestLiveApply::traceMarkersCarryTheirLabels()
{
    bs::profiler::TraceMeta meta;
    meta.stages = 1;
    meta.attributes["marker.3"] = "apply: paci m=4 a=2 b=8";
    std::vector<bs::profiler::TraceEvent> events(2);
    events[0].start = 0;
    events[0].end = 100;
    events[1].kind = bs::profiler::EventKind::Marker;
    events[1].start = events[1].end = 100;
    events[1].microbatch = 3;
    const auto markers = traceMarkers(*bs::profiler::makeSnapshot(meta, events));
    QCOMPARE(markers.size(), std::size_t{1});
    QCOMPARE(markers[0].timeNs, 100.0);
    QCOMPARE(markers[0].label, QStringLiteral("apply: paci m=4 a=2 b=8"));
}

void TestLiveApply::markersArePaintedAtTheirTime()
{
    TimelineView view;
    view.resize(TimelineView::kGutterPx + 400, 120);
    view.zoom()->resetRange(0, 1000);
    view.zoom()->setView(0, 1000);
    view.setMarkers({{500.0, QStringLiteral("apply")}});
    QCOMPARE(view.markers().size(), std::size_t{1});
    const QImage withMarker = view.grab().toImage();
    view.setMarkers({});
    const QImage without = view.grab().toImage();
    // The marker line is at the middle of the event area (500 of 0..1000 ns), dashed, below the
    // label; 40 px to its left nothing changes.
    const int x = TimelineView::kGutterPx + static_cast<int>(view.eventAreaWidth() / 2);
    int changed = 0;
    int changedLeft = 0;
    for (int y = 60; y < 120; ++y) {
        changed += withMarker.pixel(x, y) != without.pixel(x, y) ? 1 : 0;
        changedLeft += withMarker.pixel(x - 40, y) != without.pixel(x - 40, y) ? 1 : 0;
    }
    QVERIFY2(changed >= 20, qPrintable(QString::number(changed)));
    QCOMPARE(changedLeft, 0);
}

void TestLiveApply::applyWithoutALiveRunIsRefused()
{
    MainWindow window(false);
    QVERIFY(window.applyAction() != nullptr);
    QVERIFY(!window.applyAction()->isEnabled());
    const bs::Status none = window.applyToLiveRun();
    QVERIFY(!none.has_value());
    QCOMPARE(none.error().code, bs::ErrorCode::Unavailable);
    // A simulated replay cannot change its settings: the action stays off and the backend refuses.
    window.startDemo(DemoOptions{});
    QSignalSpy started(window.runs(), &RunController::runStarted);
    QVERIFY(started.wait(5000));
    QVERIFY(!window.applyAction()->isEnabled());
    const bs::Status simulated = window.applyToLiveRun();
    QVERIFY(!simulated.has_value());
    QCOMPARE(simulated.error().code, bs::ErrorCode::Unavailable);
    window.stopRuns();
    QSignalSpy idle(window.runs(), &RunController::idle);
    QVERIFY(idle.wait(5000));
}

void TestLiveApply::applyChangesTheLiveRunAtABatchBoundary()
{
#ifndef BS_HAVE_RUN_SESSION
    QSKIP("built without the LibTorch runtime");
#else
    bs::runtime::RunConfig c = bs::test::tinyRunConfig("1f1b", /*steps=*/60);
    constexpr int kOldM = 4;

    RunController controller;
    QSignalSpy updated(&controller, &RunController::runUpdated);
    QSignalSpy finished(&controller, &RunController::runFinished);
    QSignalSpy failed(&controller, &RunController::runFailed);
    controller.enqueue(std::make_unique<RunSessionBackend>("live", c));
    // Wait until a few steps trained, so the loss has moved off its start value.
    for (bool ready = false; !ready;) {
        QVERIFY(updated.wait(20'000));
        const auto latest = updated.last().at(1).value<RunUpdatePtr>();
        ready = latest && latest->metrics.size() >= 6;
    }

    // Apply takes the whole RunConfig (the tuning panel's); the runtime picks the live fields.
    bs::runtime::RunConfig bad = c;
    bad.schedule.name = "paci";
    bad.pipeline.microbatches = 4;
    bad.pipeline.accum = 3;
    bad.pipeline.microBatchSize = 2;
    const bs::Status refused = controller.apply(bad);
    QVERIFY(!refused.has_value());
    QVERIFY(refused.error().describe().find("pipeline.accum") != std::string::npos);
    bs::runtime::RunConfig other = bad;
    other.pipeline.accum = 2;
    other.pipeline.stages = 8;
    const bs::Status stages = controller.apply(other);
    QVERIFY(!stages.has_value());
    QVERIFY(stages.error().describe().find("pipeline.stages") != std::string::npos);

    bs::runtime::RunConfig request = c;
    request.schedule.name = "paci";
    request.pipeline.microbatches = 2;
    request.pipeline.accum = 1;
    request.pipeline.microBatchSize = 3;
    const bs::Status applied = controller.apply(request);
    QVERIFY2(applied.has_value(), applied ? "" : applied.error().describe().c_str());

    QVERIFY(finished.wait(120'000));
    QCOMPARE(failed.count(), 0);
    const auto update = finished.takeFirst().at(1).value<RunUpdatePtr>();
    QVERIFY(update && update->finished && update->trace);
    // Every step trained, numbered on.
    QCOMPARE(static_cast<int>(update->metrics.size()), c.training.steps);
    for (int i = 0; i < c.training.steps; ++i) {
        QCOMPARE(update->metrics[static_cast<std::size_t>(i)].step, i);
    }
    // One marker with the new settings, at a batch boundary that the run had not reached yet.
    const auto markers = traceMarkers(*update->trace);
    QCOMPARE(markers.size(), std::size_t{1});
    QCOMPARE(markers[0].label, QStringLiteral("apply: paci m=2 a=1 b=3"));
    int step = -1;
    update->trace->forEach([&](const bs::profiler::TraceEvent& e) {
        if (e.kind == bs::profiler::EventKind::Marker) {
            step = e.microbatch;
        }
    });
    QVERIFY(step > 0 && step < c.training.steps);
    const std::int64_t boundary = static_cast<std::int64_t>(step) * kOldM;
    const auto t = static_cast<bs::profiler::TimeNs>(markers[0].timeNs);
    std::int64_t after = 0;
    std::int64_t lastMb = -1;
    bool ordered = true;
    update->trace->forEach([&](const bs::profiler::TraceEvent& e) {
        if (e.kind == bs::profiler::EventKind::Marker || e.kind == bs::profiler::EventKind::Update) {
            return;
        }
        ordered = ordered && (e.microbatch < boundary ? e.end <= t : e.start >= t);
        if (e.microbatch >= boundary && e.stage == 0 && e.kind == bs::profiler::EventKind::Forward) {
            ++after;
        }
        lastMb = std::max<std::int64_t>(lastMb, e.microbatch);
    });
    QVERIFY2(ordered, "every event before the boundary ended by the marker; none after it started earlier");
    // After the change a global batch is m = 2 micro-batches.
    QCOMPARE(after, static_cast<std::int64_t>(c.training.steps - step) * 2);
    QCOMPARE(lastMb + 1, boundary + after);
    // The loss continues from the trained weights (not back to the start).
    QVERIFY(step >= 6);
    QVERIFY(update->metrics[static_cast<std::size_t>(step)].trainLoss < update->metrics.front().trainLoss - 0.05);

    // The report attributes bubbles per setting: 1f1b (flush) before the boundary, paci (none) after.
    QCOMPARE(update->laterSettings.size(), std::size_t{1});
    QCOMPARE(update->laterSettings[0].firstMicrobatch, static_cast<int>(boundary));
    QCOMPARE(update->laterSettings[0].microbatchesPerBatch, 2);
    QVERIFY(!update->laterSettings[0].synchronous);
    QVERIFY(update->report.has_value());
    QCOMPARE(update->report->microbatches, static_cast<int>(boundary + after));

    // The timeline view takes the markers as they come.
    TimelineView view;
    view.setMarkers(traceMarkers(*update->trace));
    QCOMPARE(view.markers().size(), std::size_t{1});
#endif
}

void TestLiveApply::mainWindowApplyMarksTheLiveTimeline()
{
#ifndef BS_HAVE_RUN_SESSION
    QSKIP("built without the LibTorch runtime");
#else
    MainWindow window(false);
    DemoOptions live;
    live.live = true;
    live.batches = 6;
    live.baseline = "";
    QSignalSpy updated(window.runs(), &RunController::runUpdated);
    QSignalSpy finished(window.runs(), &RunController::runFinished);
    window.startDemo(live); // 8-stage tiny GPT, PACI a = 8, b = 8, trained with LibTorch
    QVERIFY(updated.wait(30'000));
    QVERIFY(window.applyAction()->isEnabled());
    WhatIfConfig wanted = window.tuning()->config();
    wanted.run.pipeline.microbatches = 4; // m = a = 4 from the next boundary
    window.tuning()->setConfig(wanted);
    const bs::Status applied = window.applyToLiveRun();
    QVERIFY2(applied.has_value(), applied ? "" : applied.error().describe().c_str());
    QVERIFY(finished.wait(240'000));
    QTest::qWait(50);
    QVERIFY(!window.applyAction()->isEnabled());
    const auto update = finished.takeFirst().at(1).value<RunUpdatePtr>();
    QVERIFY(update && update->finished);
    QCOMPARE(static_cast<int>(update->metrics.size()), live.batches);
    const auto& markers = window.compare()->timeline(0)->markers();
    QCOMPARE(markers.size(), std::size_t{1});
    QCOMPARE(markers[0].label, QStringLiteral("apply: paci m=4 a=4 b=8"));
    // Issue 30: its throughput counts each batch at the m·b in force (8·8 before, 4·8 after), not
    // the first settings' for the whole run, and the prediction check names the settings it ended with.
    QCOMPARE(update->applied.size(), std::size_t{1});
    const int changedAt = update->applied[0].step;
    QVERIFY(changedAt > 0 && changedAt < live.batches);
    const auto& slot = window.workspace()->slot(0);
    QVERIFY(slot && slot->finished());
    const double samples = changedAt * 8.0 * 8 + (live.batches - changedAt) * 4.0 * 8;
    const double seconds = bs::toSeconds(slot->plan.result.report.makespan);
    QVERIFY(seconds > 0);
    QVERIFY2(std::abs(slot->plan.result.throughputSamplesPerSecond - samples / seconds) < 1e-6 * samples / seconds,
        qPrintable(QString::number(slot->plan.result.throughputSamplesPerSecond)));
    QCOMPARE(slot->config.pipeline.microbatches, 4); // selection and export follow the settings it ended with
    bool named = false;
    const QTableWidget* checks = window.predictionCheck()->table();
    for (int r = 0; r < checks->rowCount(); ++r) {
        named = named || (checks->item(r, 0) && checks->item(r, 0)->text().startsWith(QStringLiteral("PACI a=4 b=8")));
    }
    QVERIFY2(named, "the prediction check names PACI a=4 b=8, the settings the run ended with");
    window.stopRuns();
#endif
}

// Run ▸ Resume run directory (main_window_resume.cpp): a run killed after its checkpoint at step 2
// continues live in the GUI to its 4 steps, in the same directory; a folder without a checkpoint
// is refused with the reason.
void TestLiveApply::resumeRunDirectoryContinuesFromItsCheckpoint()
{
#ifndef BS_HAVE_RUN_SESSION
    QSKIP("built without the LibTorch runtime");
#else
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    MainWindow window(false);
    QString error;
    QVERIFY(!window.resumeRunDirectory(dir.path(), &error));
    QVERIFY2(error.contains(QStringLiteral("no checkpoint")), qPrintable(error));
    bs::runtime::RunConfig config = bs::test::tinyRunConfig("1f1b", 4);
    config.training.checkpointEvery = 2;
    {
        bs::runtime::SessionOptions options;
        options.outDir = std::filesystem::path(dir.path().toStdString());
        auto first = bs::runtime::RunSession::create(config, options);
        QVERIFY(first.has_value());
        QVERIFY(first->runSteps(3).has_value()); // checkpoint at 2; batch 3 is trained again
    }
    QSignalSpy finished(window.runs(), &RunController::runFinished);
    QVERIFY2(window.resumeRunDirectory(dir.path(), &error), qPrintable(error));
    QVERIFY(finished.wait(240'000));
    const auto update = finished.takeFirst().at(1).value<RunUpdatePtr>();
    QVERIFY(update && update->finished);
    QCOMPARE(static_cast<int>(update->metrics.size()), 2); // steps 2 and 3, this session's
    QCOMPARE(update->metrics.back().step, 3);
    QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("summary.json"))));
    window.stopRuns();
#endif
}

QTEST_MAIN(TestLiveApply)
#include "tst_live_apply.moc"
