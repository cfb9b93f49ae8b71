// MainWindow: the demo, live and simulated runs in their slots, live Apply and calibration.
#include "profiler/analysis/analyze.h"
#include "profiler/io/chrome_trace.h"
#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/simulator.h"
#include "ui/bridge/simulated_backend.h"
#include "ui/charts/loss_chart.h"
#include "ui/charts/metric_series.h"
#include "ui/charts/metrics_panel.h"
#include "ui/charts/stage_charts.h"
#include "ui/common/format.h"
#include "ui/compare/compare_view.h"
#include "ui/shell/main_window.h"
#ifdef BS_HAVE_RUN_SESSION
#include "ui/bridge/run_session_backend.h"
#endif
#include "ui/shell/exporters.h"
#include "ui/shell/run_figures.h"
#include "ui/timeline/async_index_builder.h"
#include "ui/timeline/timeline_view.h"
#include "ui/tuning/prediction_check_view.h"
#include "ui/tuning/tuning_panel.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <utility>

namespace bs::ui {

bool MainWindow::startDemo(const DemoOptions& options)
{
    WhatIfConfig config; // 8-stage tiny GPT on the CPU profile, a = 8, b = 8
    config.batches = options.batches;
    config.run.schedule.name = options.schedule;
    config.baseline = options.baseline;
    config.calibration = m_tuning->calibration();
    m_tuning->setConfig(config);
    WhatIfConfig baseline = config;
    baseline.run.schedule.name = options.baseline;
    if (options.baseline.empty()) {
        return startRuns({config}, options);
    }
    return startRuns({config, baseline}, options);
}

bool MainWindow::startLiveRun()
{
    if (!liveTrainingAvailable()) {
        statusBar()->showMessage(tr("Train live needs the training runtime (this build has none)"), 8000);
        return false;
    }
    WhatIfConfig settings = m_tuning->config(); // what the panel shows: schedule, p, v, a, b, model, device
    settings.baseline.clear();
    // The one pre-flight the what-if and Suggest use: refused here, nothing shown is touched.
    if (Status start = m_tuning->preflight(settings); !start) {
        m_tuning->showError(tr("Not started: %1").arg(toQt(start.error().message)));
        statusBar()->showMessage(tr("Train live refused: %1").arg(toQt(start.error().describe())), 15000);
        return false;
    }
    DemoOptions live;
    live.live = true;
    live.batches = std::max(1, settings.batches);
    live.wallSeconds = 0;
    return startRuns({settings}, live);
}

bool MainWindow::startCalibrationPass()
{
    if (!liveTrainingAvailable()) {
        statusBar()->showMessage(tr("Calibrate needs the training runtime (this build has none)"), 8000);
        return false;
    }
    // The panel's settings at two micro-batch sizes (b and 2b, or b/2 and b at the top of the
    // slider): two points fit the affine cost t = fixed + perSample·b (runtime/plan/sim/cost_fit.h).
    WhatIfConfig at = m_tuning->config();
    at.baseline.clear();
    at.batches = kCalibrationBatches;
    WhatIfConfig other = at;
    const int b = at.run.pipeline.microBatchSize;
    if (b * 2 <= 64) {
        other.run.pipeline.microBatchSize = b * 2;
    } else {
        at.run.pipeline.microBatchSize = std::max(1, b / 2);
    }
    DemoOptions pace;
    pace.batches = kCalibrationBatches;
    pace.wallSeconds = 0;
    pace.live = true;
    for (const WhatIfConfig& run : {at, other}) { // the one pre-flight, as Train live
        if (Status start = m_tuning->preflight(run); !start) {
            statusBar()->showMessage(tr("Calibrate refused: %1").arg(toQt(start.error().describe())), 15000);
            return false;
        }
    }
    if (!startRuns({at, other}, pace)) {
        return false; // no two free slots: the status bar says so
    }
    m_calibrating = true;
    statusBar()->showMessage(tr("Calibrating: %1 at b = %2 and b = %3 (%4 global batches each)")
                                 .arg(toQt(scheduleDisplayName(at.run.schedule.name)))
                                 .arg(at.run.pipeline.microBatchSize)
                                 .arg(other.run.pipeline.microBatchSize)
                                 .arg(kCalibrationBatches),
        15000);
    return true;
}

bool MainWindow::startRuns(const std::vector<WhatIfConfig>& runs, const DemoOptions& options)
{
    // The runs shown stay until the user removes them: new runs take free slots or do not start.
    const int needed = static_cast<int>(runs.size());
    int queuedElsewhere = 0; // slots held by queued runs that this start replaces
    for (const QueuedRun& queued : m_queuedPlans) {
        queuedElsewhere += queued.slot >= 0 ? 1 : 0;
    }
    if (m_workspace->showsRuns() && m_workspace->freeSlots() + queuedElsewhere < needed) {
        statusBar()->showMessage(tr("All %1 run slots hold runs: remove one (Run ▸ Remove run) to start %2 more")
                                     .arg(RunWorkspace::kSlots)
                                     .arg(needed),
            15000);
        return false;
    }
    m_runs->stop();
    dropQueuedRuns();
    enterRunMode();
    m_stopping = false;
    m_liveBudget = runs.empty() ? 0 : runs.front().memoryBudgetBytes;
    m_batchSlots.clear();
    for (const WhatIfConfig& runConfig : runs) {
        const std::string& schedule = runConfig.run.schedule.name;
        auto plan = predictRun(runConfig, schedule);
        if (!plan) {
            statusBar()->showMessage(toQt(plan.error().describe()), 8000);
            continue;
        }
        const std::string label = plan->label;
        runtime::RunConfig rc = toRunConfig(runConfig);
        rc.training.steps = options.batches;
        // Time to target counts the validation loss: one small pass per batch (off the timeline
        // and out of the wall-clock throughput).
        rc.training.evalInterval = 1;
        rc.training.evalBatches = 2;
        const int slot = m_workspace->reserve();
        if (slot < 0) { // cannot happen after the check above; never in another run's place
            break;
        }
        m_batchSlots.push_back(slot);
        m_calibratedBatches[static_cast<std::size_t>(slot)] = 0;
        m_compare->setSlot(slot, tr("waiting"), QString(), nullptr);
        m_queuedPlans.push_back(QueuedRun{*plan, rc, slot});
#ifdef BS_HAVE_RUN_SESSION
        if (options.live) {
            auto backend = std::make_unique<RunSessionBackend>(label, rc);
            backend->setWarmUp(&runConfig == &runs.front()); // the first run pays no start-up costs
            m_runs->enqueue(std::move(backend));
            continue;
        }
#endif
        SimulatedBackend::Options pace;
        pace.wallSeconds = options.wallSeconds;
        m_runs->enqueue(std::make_unique<SimulatedBackend>(label, std::move(plan).value().result, pace));
    }
    m_liveMeasured = options.live && liveTrainingAvailable();
    m_selectNextStart = true;
    clearPredictionLane();
    m_compare->fitToRuns(); // the axis follows the runs shown and the new ones
    m_stopAction->setEnabled(true);
    return !m_batchSlots.empty();
}

void MainWindow::dropQueuedRuns()
{
    for (const QueuedRun& queued : m_queuedPlans) {
        m_workspace->release(queued.slot);
        if (queued.slot >= 0 && !m_workspace->slot(queued.slot)) {
            m_compare->setSlot(queued.slot, QString(), QString(), nullptr); // never started: no slot
        }
    }
    m_queuedPlans.clear();
}

bool MainWindow::runDemoToEnd(const DemoOptions& options, int timeoutMs)
{
    DemoOptions instant = options;
    instant.wallSeconds = 0;
    QEventLoop loop;
    const auto done = connect(m_runs, &RunController::idle, &loop, &QEventLoop::quit);
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    if (!startDemo(instant)) {
        disconnect(done);
        return false;
    }
    loop.exec();
    disconnect(done);
    QApplication::processEvents(); // deliver the last queued updates
    return std::all_of(m_batchSlots.begin(), m_batchSlots.end(), [this](int slot) {
        const auto& run = m_workspace->slot(slot);
        return run && run->finished();
    });
}

void MainWindow::stopRuns()
{
    m_stopping = true;
    m_runs->stop();
    dropQueuedRuns();
    for (int slot = 0; slot < RunWorkspace::kSlots; ++slot) { // the header must not keep saying "live"
        const auto& live = m_workspace->slot(slot);
        if (live && live->latest && !live->latest->finished) {
            m_compare->setSlotText(slot, toQt(live->plan.label),
                tr("stopped at %1 %").arg(static_cast<int>(live->latest->progress * 100)));
        }
    }
}

void MainWindow::onRunStarted(int run, const QString& label)
{
    if (m_queuedPlans.empty()) {
        return;
    }
    const QueuedRun& queued = m_queuedPlans.front();
    const int queuedStages = queued.config.pipeline.stages;
    const int slot = queued.slot;
    m_workspace->placeStarted(slot, queued.plan, queued.config, m_liveMeasured);
    m_runSlot[run] = slot;
    m_queuedPlans.pop_front();
    // Nothing shown may belong to an earlier run or an earlier prediction.
    clearPredictionLane();
    m_tuning->clearFigures(tr("%1 is running: its measured figures appear when it finishes.").arg(label));
    if (std::exchange(m_selectNextStart, false) && m_workspace->select(slot)) {
        m_compare->setSelectedSlot(slot); // the batch's first run; the panel keeps its settings
    }
    m_applyAction->setEnabled(m_liveMeasured); // only a live LibTorch run can change its settings
    m_compare->timeline(slot)->setMarkers({});
    const QString contention = m_liveMeasured ? cpuContentionNote(queuedStages) : QString();
    statusBar()->showMessage(contention.isEmpty() ? tr("Running %1…").arg(label) : contention, 15000);
}

QString cpuContentionNote(int stages)
{
    // A CPU run times every stage's actions on this machine's cores; when other processes already
    // use most of them (load average), the measured times include their waits, and the schedule
    // that happens to be timed while the machine is busiest looks slowest.
    const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    double load[1] = {0};
    const double freeCores = getloadavg(load, 1) == 1 ? std::max(0.0, cores - load[0]) : cores;
    if (stages <= freeCores) {
        return {};
    }
    return QObject::tr("Note: %1 stages are timed on %2 of %3 cores free (load %4): measured times include "
                       "waiting for the CPU, so runs compared now may differ by more than their schedules do.")
        .arg(stages)
        .arg(freeCores, 0, 'f', 1)
        .arg(cores)
        .arg(load[0], 0, 'f', 1);
}

void MainWindow::onRunUpdated(int run, const RunUpdatePtr& update)
{
    const auto it = m_runSlot.find(run);
    if (it != m_runSlot.end()) {
        calibrateWhileRunning(it->second, *update); // also while the sliders show predictions
    }
    if (!m_workspace->showsRuns() || it == m_runSlot.end()) {
        return;
    }
    auto& live = m_workspace->slot(it->second);
    live->latest = update;
    const profiler::AnalysisOptions options =
        runtime::analysisOptionsFor(live->plan.result.schedule, nullptr, update->laterSettings);
    const QString source = live->measured ? tr("live · LibTorch") : tr("replaying a simulation");
    const std::string title = live->applied.empty() ? update->label : update->label + " → " + live->applied;
    m_compare->setSlotText(it->second, toQt(title),
        source + QStringLiteral(" · ") + QString::number(static_cast<int>(update->progress * 100))
            + QStringLiteral(" %"));
    m_indexers[static_cast<std::size_t>(it->second)]->request(update->trace, options);
    showLoss(it->second, *update);
}

void MainWindow::onLiveIndexBuilt(int slot, const BuiltTimeline& timeline)
{
    const auto& live = m_workspace->slot(slot);
    if (!m_workspace->showsRuns() || !live || !live->indexing) {
        return; // the run finished (its final index is shown) or the slot shows something else now
    }
    m_compare->timeline(slot)->setIndex(timeline.index);
    m_compare->timeline(slot)->setMarkers(timeline.markers);
}

Status MainWindow::applyToLiveRun()
{
    const runtime::RunConfig wanted = toRunConfig(m_tuning->config());
    const Status s = m_runs->apply(wanted);
    if (s) {
        // The header names the settings the run switches to (from the next global-batch boundary).
        for (auto& live : m_workspace->slots()) {
            if (live && live->measured && live->latest && !live->latest->finished) {
                live->applied = runLabel(wanted);
            }
        }
        clearPredictionLane();
        statusBar()->showMessage(tr("Apply: %1 from the next global-batch boundary").arg(toQt(runLabel(wanted))), 8000);
    } else {
        statusBar()->showMessage(tr("Apply refused: %1").arg(toQt(s.error().describe())), 8000);
    }
    return s;
}

void MainWindow::showLoss(int slot, const RunUpdate& update)
{
    if (update.metrics.empty()) {
        return;
    }
    const auto index = static_cast<std::size_t>(slot);
    m_lossCurves.resize(RunWorkspace::kSlots);
    m_lossCurves[index] = LossCurve{toQt(update.label), update.metrics};
    showLossCurves();
}

void MainWindow::onRunFinished(int run, const RunUpdatePtr& update)
{
    const auto it = m_runSlot.find(run);
    if (!m_workspace->showsRuns() || it == m_runSlot.end()) {
        return;
    }
    auto& live = m_workspace->slot(it->second);
    live->latest = update;
    live->indexing = false; // a build still running for it is dropped when it arrives
    m_indexers[static_cast<std::size_t>(it->second)]->cancelPending();
    m_applyAction->setEnabled(false);
    if (update->trace) {
        m_compare->timeline(it->second)->setMarkers(traceMarkers(*update->trace));
    }
    showLoss(it->second, *update);
    if (live->measured && update->report && update->trace) {
        // Replace the prediction by what the run measured, so table and charts show the real run.
        live->plan.result.report = *update->report;
        live->plan.result.trace = update->trace;
        const double seconds = toSeconds(update->report->makespan);
        const auto& params = live->plan.result.schedule.params;
        // Each global batch at the m·b in force when it trained (an Apply changes them mid-run).
        const double samples = samplesTrained(live->config, update->applied, params.batches);
        live->plan.result.throughputSamplesPerSecond = seconds > 0 ? samples / seconds : 0.0;
        if (!update->applied.empty()) { // the settings it ended with: selection, export, the check
            const int steps = live->config.training.steps;
            live->config = update->applied.back().config;
            live->config.training.steps = steps;
            live->applied = runLabel(live->config);
        }
        live->plan.index = TimelineIndex::build(update->trace, update->report->bubbles); // the run's one analysis
        calibrateFrom(it->second, live->plan, live->config.pipeline.microBatchSize);
    }
    const profiler::Report& report = update->report ? *update->report : live->plan.result.report;
    const QString how = m_stopping ? tr("stopped · ") : tr("finished · ");
    const std::string title = live->applied.empty() ? update->label : update->label + " → " + live->applied;
    m_compare->setSlot(it->second, toQt(title),
        how + (live->measured ? tr("measured (LibTorch) · ") : tr("simulated replay · "))
            + (live->measured ? figuresLine(report, live->plan.result.throughputSamplesPerSecond)
                              : predictedFiguresLine(live->plan)),
        live->plan.index);
    m_compare->fitToRuns();
    refreshLiveTable();
    // The panel's figures are the selected run's, once it has finished (never a stale "running").
    const int selected = std::max(0, m_workspace->selected());
    if (const auto& shown = m_workspace->slot(selected); shown && shown->finished()) {
        showCharts(shown->plan, m_liveBudget);
        Prediction figures;
        figures.config = m_tuning->config();
        figures.primary = shown->plan;
        m_tuning->showRunFigures(figures, shown->measured);
    }
    refreshStatistics(); // its noise scale and validation losses, complete
    statusBar()->showMessage(tr("%1 finished").arg(toQt(update->label)), 5000);
}

void MainWindow::showLossCurves()
{
    std::vector<LossCurve> shown; // the slots' curves, in slot order, none for an empty slot
    for (const LossCurve& curve : m_lossCurves) {
        if (!curve.label.isEmpty()) {
            shown.push_back(curve);
        }
    }
    m_metrics->setRuns(shown, m_targetLoss);
}

bool MainWindow::removeRun(int slot, QString* error)
{
    const auto fail = [error](const QString& why) {
        if (error) {
            *error = why;
        }
        return false;
    };
    if (slot < 0 || slot >= RunWorkspace::kSlots || !m_workspace->showsRuns() || !m_workspace->slot(slot)) {
        return fail(tr("Remove run: select a run first (click its timeline or title)"));
    }
    if (!m_workspace->slot(slot)->finished() && m_runs->isBusy()) {
        return fail(
            tr("Remove run: %1 is still running; Stop it first").arg(toQt(m_workspace->slot(slot)->plan.label)));
    }
    std::erase_if(m_runSlot, [slot](const auto& entry) { return entry.second == slot; });
    m_indexers[static_cast<std::size_t>(slot)]->cancelPending();
    m_workspace->remove(slot);
    m_compare->setSlot(slot, QString(), QString(), nullptr);
    m_compare->timeline(slot)->setMarkers({});
    if (static_cast<std::size_t>(slot) < m_lossCurves.size()) {
        m_lossCurves[static_cast<std::size_t>(slot)] = {};
    }
    showLossCurves();
    if (m_workspace->empty() && m_queuedPlans.empty()) {
        // The last run is gone: the slots show the what-if's predictions again.
        m_workspace->leaveRunMode();
        m_compare->setSelectedSlot(-1);
        m_compare->setSummaries({});
        m_check->setChecks({});
        onConfigChanged(m_tuning->config());
        return true;
    }
    refreshLiveTable();
    refreshChecks();
    refreshStatistics(); // its noise scale no longer counts
    for (int other = 0; other < RunWorkspace::kSlots; ++other) { // the selection moves to a run still shown
        if (m_workspace->slot(other) && m_workspace->slot(other)->finished()) {
            selectSlot(other);
            break;
        }
    }
    m_compare->fitToRuns();
    return true;
}

void MainWindow::refreshLiveTable()
{
    std::vector<ComparisonRow> summaries;
    for (std::size_t slot = 0; slot < m_workspace->slots().size(); ++slot) {
        const auto& live = m_workspace->slots()[slot];
        if (live && live->finished()) {
            const auto& report = live->latest->report ? *live->latest->report : live->plan.result.report;
            ComparisonRow summary =
                summaryOf(live->plan, report, live->measured ? FiguresOf::Measurement : FiguresOf::Prediction);
            summary.label += live->measured ? " · measured" : " · simulated";
            summary.drift = live->measuredDrift(); // per model stage, from its tensors; none for a replay
            // The same number the loss panel marks on its virtual-time axis.
            if (slot < m_lossCurves.size() && !m_lossCurves[slot].label.isEmpty()) { // the slot's own curve
                summary.timeToTargetS =
                    timeToTarget(m_lossCurves[slot].samples, m_targetLoss, TimeAxis::Virtual).value_or(-1.0);
            }
            summaries.push_back(std::move(summary));
        }
    }
    if (m_predictedSummary) {
        summaries.push_back(*m_predictedSummary); // after the runs: the difference column stays run vs run
    }
    QStringList labels; // two runs at the same settings: "#1", "#2" tell their columns apart
    for (const ComparisonRow& row : summaries) {
        labels << toQt(row.label);
    }
    labels = distinctLabels(labels);
    for (std::size_t i = 0; i < summaries.size(); ++i) {
        summaries[i].label = fromQt(labels[static_cast<qsizetype>(i)]);
    }
    m_compare->setSummaries(std::move(summaries));
}

} // namespace bs::ui
