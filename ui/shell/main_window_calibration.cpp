// MainWindow: the one calibration (fitted from every measured run), the prediction check, the
// prediction lane next to the runs, and the selected run the panel, charts and exports follow.
#include "ui/shell/main_window.h"

#include "ui/charts/stage_charts.h"
#include "ui/common/format.h"
#include "ui/compare/compare_view.h"
#include "ui/shell/run_figures.h"
#include "ui/timeline/timeline_view.h"
#include "ui/tuning/prediction_check_view.h"
#include "ui/tuning/tuning_panel.h"

#include <QStatusBar>

#include <algorithm>

namespace bs::ui {

void MainWindow::calibrateWhileRunning(int slot, const RunUpdate& update)
{
    const auto index = static_cast<std::size_t>(slot);
    const auto& live = m_workspace->slot(slot);
    if (!live || !live->measured || !update.trace || update.metrics.size() == m_calibratedBatches[index]) {
        return;
    }
    m_calibratedBatches[index] = update.metrics.size();
    const auto& params = live->plan.result.schedule.params;
    if (auto sample = costSampleFromTrace(
            *update.trace, params.stages, live->config.pipeline.microBatchSize, params.name, update.label)) {
        addCalibrationSample(live->scope, std::move(sample).value());
    }
}

void MainWindow::calibrateFrom(int slot, const PredictedRun& run, int microBatchSize, runtime::FirstActions first)
{
    if (!run.result.trace) {
        return;
    }
    const auto& params = run.result.schedule.params;
    // A trace has a lane per rank, except an imported interleaved job's, which has one per stage
    // (v per rank): its costs are then per stage, as its meta says.
    const int lanes = std::max(params.stages, run.result.trace->meta().stages);
    auto sample = costSampleFromTrace(*run.result.trace, lanes, microBatchSize, params.name, run.label, first);
    if (!sample) {
        statusBar()->showMessage(
            tr("Cannot calibrate from %1: %2").arg(toQt(run.label), toQt(sample.error().describe())), 8000);
        return;
    }
    if (const auto& shown = m_workspace->slot(slot)) {
        addCalibrationSample(shown->scope, std::move(sample).value()); // the run's own scope
    }
}

void MainWindow::addCalibrationSample(const std::string& scope, runtime::CostSample sample)
{
    // One sample per run, the newest run's stage count (RunWorkspace::addCalibrationSample).
    if (auto calibration = m_workspace->addCalibrationSample(scope, std::move(sample)); !calibration) {
        statusBar()->showMessage(tr("Cannot calibrate: %1").arg(toQt(calibration.error().describe())), 8000);
    }
}

CalibrationPtr MainWindow::calibration() const
{
    return m_workspace->calibrationFor(currentScope());
}

std::string MainWindow::currentScope() const
{
    const int selected = m_workspace->selected();
    if (selected >= 0 && m_workspace->slot(selected)) {
        const RunSlot& run = *m_workspace->slot(selected);
        if (run.scope != calibrationScope(run.config)) { // an imported job: its own what-if
            return run.scope;
        }
    }
    return calibrationScope(m_tuning->config().run);
}

bool MainWindow::followScope()
{
    // The statistics of time to target too: the runs of the model shown, as the calibration.
    const bool statistics = m_tuning->refreshStatistics();
    const CalibrationPtr calibration = this->calibration();
    if (calibration == m_tuning->calibration()) {
        return statistics;
    }
    m_tuning->setCalibration(calibration);
    m_check->setCalibration(calibration);
    return true;
}

void MainWindow::refreshStatistics()
{
    // A run's noise scale came or went: the what-if's time to target follows where a prediction
    // is shown (none is put under runs that did not have one).
    if (m_tuning->refreshStatistics() && (!m_workspace->showsRuns() || m_predictedSummary)) {
        onConfigChanged(m_tuning->config());
    }
}

void MainWindow::onCalibrationChanged(const std::string& scope, const CalibrationPtr&)
{
    if (scope == currentScope()) {
        followScope(); // the panel (and Suggest's table) take the refit; another model's never
    }
    refreshChecks();
}

void MainWindow::refreshChecks()
{
    std::vector<PredictionCheck> checks;
    for (const auto& live : m_workspace->slots()) {
        // Each run against its own scope's calibration (its model on its device).
        const CalibrationPtr calibration = live ? m_workspace->calibrationFor(live->scope) : nullptr;
        if (!calibration || !live || !live->measured || !live->latest || !live->latest->finished
            || !live->plan.result.trace
            || live->plan.result.throughputSamplesPerSecond <= 0) { // imported jobs: no throughput
            continue;
        }
        const auto& params = live->plan.result.schedule.params;
        // The run's own settings, predicted through the same calibration the sliders and Suggest use;
        // after a live Apply, the settings it ended with (its config), named so.
        WhatIfConfig own = m_tuning->config();
        own.run = live->config;
        if (live->applied.empty()) {
            own.run.pipeline.microbatches = params.microbatches; // the schedule as it ran: a = m
            own.run.pipeline.accum = 0;
        }
        own.baseline.clear();
        own.batches = std::max(1, params.batches);
        own.calibration = calibration;
        const std::string schedule = own.run.schedule.name;
        const std::string label =
            live->applied.empty() ? live->plan.label : live->applied + " (Apply during " + live->plan.label + ")";
        if (auto predicted = predictRun(own, schedule)) {
            checks.push_back(checkPrediction(label, calibration->sourceFor(schedule), predicted->result.report,
                predicted->result.throughputSamplesPerSecond, live->plan.result.report,
                live->plan.result.throughputSamplesPerSecond, own.batches));
        }
    }
    m_check->setChecks(checks);
}

void MainWindow::showPredictionLane(const Prediction& prediction)
{
    const auto& run = prediction.primary;
    const QString source = prediction.config.calibration
        ? toQt(prediction.config.calibration->sourceFor(prediction.config.schedule()))
        : tr("device profile %1").arg(toQt(prediction.config.deviceProfile));
    m_compare->setPrediction(tr("Predicted: %1").arg(toQt(run.label)),
        source + QStringLiteral(" · ") + predictedFiguresLine(run), run.index);
    ComparisonRow summary = summaryOf(run, run.result.report, FiguresOf::Prediction);
    summary.label = run.label + " · predicted";
    m_predictedSummary = summary;
    refreshLiveTable();
}

void MainWindow::clearPredictionLane()
{
    m_compare->setPrediction(QString(), QString(), nullptr);
    if (m_predictedSummary) {
        m_predictedSummary.reset();
        refreshLiveTable();
    }
}

void MainWindow::enterRunMode()
{
    if (m_workspace->showsRuns()) {
        return; // the runs shown stay until the user removes them
    }
    for (int slot = 0; slot < CompareView::kSlots; ++slot) { // the slots held predictions: none stays
        m_compare->setSlot(slot, QString(), QString(), nullptr);
    }
    m_compare->setSummaries({});
    m_workspace->enterRunMode();
    m_compare->setSelectedSlot(-1);
    clearPredictionLane();
}

void MainWindow::selectSlot(int slot)
{
    if (!m_workspace->select(slot)) {
        return;
    }
    m_compare->setSelectedSlot(slot);
    const RunSlot& live = *m_workspace->slot(slot);
    // The panel takes the run's settings (silently: what it shows is the run, not a prediction).
    WhatIfConfig c = m_tuning->config();
    c.run = live.config; // the whole RunConfig: schedule, p, m, a, b, model, device, steps, ...
    c.batches = std::max(1, live.config.training.steps);
    m_tuning->setConfig(c);
    followScope(); // an imported job's own calibration, or the built-in model's
    clearPredictionLane();
    if (live.latest && live.latest->finished) {
        showCharts(live.plan, m_liveBudget);
        Prediction figures;
        figures.config = c;
        figures.primary = live.plan;
        m_tuning->showRunFigures(figures, live.measured);
    }
}

runtime::RunConfig MainWindow::configToExport() const
{
    // Selecting a run put its whole RunConfig into the panel (selectSlot): the export is that run
    // (model, data, optimizer, steps) with the panel's settings.
    return toRunConfig(m_tuning->config());
}

} // namespace bs::ui
