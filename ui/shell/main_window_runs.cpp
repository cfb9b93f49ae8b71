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


namespace bs::ui {

void MainWindow::startDemo(const DemoOptions& options)
{
    WhatIfConfig config; // 8-stage tiny GPT on the CPU profile, a = 8, b = 8
    config.batches = options.batches;
    config.run.schedule.name = options.schedule;
    config.baseline = options.baseline;
    config.calibration = m_tuning->calibration();
    m_tuning->setConfig(config);
    WhatIfConfig baseline = config;
    baseline.run.schedule.name = options.baseline;
    startRuns({config, baseline}, options);
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
    m_calibrating = true;
    startRuns({at, other}, pace);
    statusBar()->showMessage(tr("Calibrating: %1 at b = %2 and b = %3 (%4 global batches each)")
                                 .arg(toQt(scheduleDisplayName(at.run.schedule.name)))
                                 .arg(at.run.pipeline.microBatchSize)
                                 .arg(other.run.pipeline.microBatchSize)
                                 .arg(kCalibrationBatches),
        15000);
    return true;
}

void MainWindow::startRuns(const std::vector<WhatIfConfig>& runs, const DemoOptions& options)
{
    m_runs->stop();
    enterRunMode();
    m_stopping = false;
    m_liveBudget = runs.empty() ? 0 : runs.front().memoryBudgetBytes;
    m_queuedPlans.clear();
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
        m_queuedPlans.push_back(QueuedRun{*plan, rc});
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
    m_lossCurves.clear();
    m_calibratedBatches = {};
    m_targetLoss = 0;
    m_metrics->setRuns({});
    clearPredictionLane();
    m_compare->setSlot(0, tr("waiting"), QString(), nullptr);
    m_compare->setSlot(1, tr("waiting"), QString(), nullptr);
    m_compare->fitToRuns(); // the axis follows the new runs, not the span of the ones they replace
    m_stopAction->setEnabled(true);
}

bool MainWindow::runDemoToEnd(const DemoOptions& options, int timeoutMs)
{
    DemoOptions instant = options;
    instant.wallSeconds = 0;
    QEventLoop loop;
    const auto done = connect(m_runs, &RunController::idle, &loop, &QEventLoop::quit);
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    startDemo(instant);
    loop.exec();
    disconnect(done);
    QApplication::processEvents(); // deliver the last queued updates
    const auto& slots = m_workspace->slots();
    return slots[0] && slots[1] && slots[0]->latest && slots[1]->finished();
}

void MainWindow::stopRuns()
{
    m_stopping = true;
    m_runs->stop();
    for (int slot = 0; slot < 2; ++slot) { // the header must not keep saying "live"
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
    const int slot = m_workspace->placeStarted(queued.plan, queued.config, m_liveMeasured);
    m_runSlot[run] = slot;
    m_queuedPlans.pop_front();
    // Nothing shown may belong to an earlier run or an earlier prediction.
    clearPredictionLane();
    m_tuning->clearFigures(tr("%1 is running: its measured figures appear when it finishes.").arg(label));
    if (slot == 0 && m_workspace->select(0)) {
        m_compare->setSelectedSlot(0);
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
                live->applied =
                    runLabel(wanted.schedule.name, wanted.pipeline.microbatches, wanted.pipeline.microBatchSize);
            }
        }
        clearPredictionLane();
        statusBar()->showMessage(tr("Apply: %1 from the next global-batch boundary")
                                     .arg(toQt(runLabel(wanted.schedule.name, wanted.pipeline.microbatches,
                                         wanted.pipeline.microBatchSize))),
            8000);
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
    if (m_lossCurves.size() <= index) {
        m_lossCurves.resize(index + 1);
    }
    m_lossCurves[index] = LossCurve{toQt(update.label), update.metrics};
    m_metrics->setRuns(m_lossCurves, m_targetLoss);
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
        live->plan.result.throughputSamplesPerSecond = seconds > 0
            ? static_cast<double>(params.microbatches * params.batches * live->config.pipeline.microBatchSize) / seconds
            : 0.0;
        live->plan.index = TimelineIndex::build(update->trace, update->report->bubbles); // the run's one analysis
        calibrateFrom(it->second, live->plan, live->config.pipeline.microBatchSize);
    }
    const profiler::Report& report = update->report ? *update->report : live->plan.result.report;
    const QString how = m_stopping ? tr("stopped · ") : tr("finished · ");
    const std::string title = live->applied.empty() ? update->label : update->label + " → " + live->applied;
    m_compare->setSlot(it->second, toQt(title),
        how + (live->measured ? tr("measured (LibTorch) · ") : tr("simulated replay · "))
            + figuresLine(report, live->plan.result.throughputSamplesPerSecond),
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
    statusBar()->showMessage(tr("%1 finished").arg(toQt(update->label)), 5000);
}

void MainWindow::refreshLiveTable()
{
    std::vector<ComparisonRow> summaries;
    for (const auto& live : m_workspace->slots()) {
        if (live && live->finished()) {
            const auto& report = live->latest->report ? *live->latest->report : live->plan.result.report;
            ComparisonRow summary = summaryOf(live->plan, report);
            summary.label += live->measured ? " · measured" : " · simulated";
            summary.drift = live->measuredDrift(); // per model stage, from its tensors; none for a replay
            // The same number the loss panel marks on its virtual-time axis.
            const auto curve = std::find_if(m_lossCurves.rbegin(), m_lossCurves.rend(),
                [&](const LossCurve& c) { return c.label == toQt(live->plan.label); });
            if (curve != m_lossCurves.rend()) {
                summary.timeToTargetS = timeToTarget(curve->samples, m_targetLoss, TimeAxis::Virtual).value_or(-1.0);
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
