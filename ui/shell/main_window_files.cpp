// MainWindow: opening run directories and the exports (config, trace, panels).
#include "profiler/analysis/analyze.h"
#include "profiler/io/chrome_trace.h"
#include "runtime/plan/rundir/run_loader.h"
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


namespace bs::ui {

void MainWindow::openRunDialog()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open run directory"));
    QString error;
    if (!dir.isEmpty() && !openRunDirectory(dir, &error)) {
        QMessageBox::warning(this, tr("Cannot open run"), error);
    }
}

bool MainWindow::openRunDirectory(const QString& dir, QString* error)
{
    if (m_workspace->showsRuns() && m_workspace->freeSlots() == 0) { // never in another run's place
        if (error) {
            *error = tr("All %1 run slots hold runs: remove one (Run ▸ Remove run) to open %2")
                         .arg(RunWorkspace::kSlots)
                         .arg(dir);
        }
        return false;
    }
    if (isKinetoJobFolder(dir)) {
        return openKinetoJob(dir, error);
    }
    const auto fail = [error](const Error& e) {
        if (error) {
            *error = toQt(e.describe());
        }
        return false;
    };
    auto loaded = runtime::loadRun(fromQt(dir));
    if (!loaded) {
        return fail(loaded.error());
    }
    if (!loaded->trace) {
        return fail(makeError(ErrorCode::IoError, "the run has no trace.json yet", fromQt(dir)));
    }
    auto schedule = runtime::makeSchedule(runtime::toScheduleParams(loaded->config));
    if (!schedule) {
        return fail(schedule.error());
    }
    // A lane per rank that holds several stages (a distributed DualPipeV or interleaved run merged
    // from its ranks): say so in the trace when it does not (runs merged before it did), so lanes
    // read "rank N" with chunk shades and the analysis counts per rank.
    if (const auto& meta = loaded->trace->meta();
        !schedule->onePerRank() && meta.attributes.count("stages_per_rank") == 0 && meta.stages == schedule->ranks()) {
        profiler::TraceMeta ranked = meta;
        ranked.attributes["stages_per_rank"] = std::to_string(schedule->stagesPerRank());
        ranked.attributes["placement"] = std::string(runtime::placementName(schedule->placement));
        std::vector<profiler::TraceEvent> events;
        events.reserve(loaded->trace->size());
        loaded->trace->forEach([&events](const profiler::TraceEvent& e) { events.push_back(e); });
        loaded->trace = profiler::makeSnapshot(std::move(ranked), events);
    }
    // Memory in micro-batch units unless the summary measured bytes.
    PredictedRun run =
        measuredRun(fromQt(QFileInfo(dir).fileName()) + " (" + scheduleDisplayName(loaded->config.schedule.name) + ")",
            *schedule, loaded->trace, runtime::analysisOptionsFor(*schedule));
    const double seconds = toSeconds(run.result.report.makespan);
    if (seconds > 0) {
        run.result.throughputSamplesPerSecond = static_cast<double>(loaded->config.pipeline.microbatches)
            * loaded->config.pipeline.microBatchSize * loaded->config.training.steps / seconds;
    }
    runtime::RunDrift drift;
    if (loaded->summary) {
        const auto& stages = loaded->summary->stages;
        // The report has one row per rank; a rank holding several stages (chunks) shows its own
        // peak and the sum of its stages' weights (the stages were laid on the ranks' rows before).
        std::vector<std::int64_t> peak, staticBytes, paramBytes;
        if (loaded->summary->ranks.empty()) {
            for (const auto& stage : stages) {
                peak.push_back(stage.peakBytes);
                staticBytes.push_back(stage.paramBytes + stage.gradBytes + stage.optimizerBytes);
                paramBytes.push_back(stage.paramBytes);
            }
        } else {
            for (const runtime::RankMemory& rank : loaded->summary->ranks) {
                peak.push_back(rank.peakBytes);
                std::int64_t held = 0, params = 0;
                for (int s : rank.stages) {
                    if (s >= 0 && static_cast<std::size_t>(s) < stages.size()) {
                        const auto& stage = stages[static_cast<std::size_t>(s)];
                        held += stage.paramBytes + stage.gradBytes + stage.optimizerBytes;
                        params += stage.paramBytes;
                    }
                }
                staticBytes.push_back(held);
                paramBytes.push_back(params);
            }
        }
        for (std::size_t r = 0; r < peak.size() && r < run.result.report.perStage.size(); ++r) {
            run.result.report.perStage[r].peakMemoryBytes = peak[r];
        }
        // The memory chart's weights + optimizer band and one stashed copy, as measured.
        run.staticBytes = std::move(staticBytes);
        run.paramBytes = std::move(paramBytes);
        drift = runtime::runDrift(stages, schedule->rankOfStage);
    } else if (!loaded->metrics.empty()) {
        drift = runtime::runDrift(loaded->metrics.back().stages, schedule->rankOfStage); // cut short
    }
    LossCurve curve;
    curve.label = toQt(run.label);
    for (const auto& batch : loaded->metrics) {
        if (auto sample = plottableBatch(batch)) {
            curve.samples.push_back(std::move(*sample));
        }
    }
    m_targetLoss = loaded->config.training.targetLoss.value_or(m_targetLoss);
    const int slot = placeOpenedRun(run, loaded->config,
        tr("opened · measured · ") + figuresLine(run.result.report, run.result.throughputSamplesPerSecond),
        loaded->config.pipeline.microBatchSize, std::move(drift));
    if (slot < 0) {
        return fail(makeError(ErrorCode::InvalidArgument, "every run slot holds a run", fromQt(dir)));
    }
    // Its noise scale and validation losses: time to target in the what-if and Suggest.
    m_workspace->slot(slot)->directory = fromQt(dir);
    m_workspace->slot(slot)->openedMetrics =
        std::make_shared<const std::vector<runtime::BatchMetrics>>(loaded->metrics);
    refreshStatistics();
    m_lossCurves.resize(RunWorkspace::kSlots);
    m_lossCurves[static_cast<std::size_t>(slot)] = std::move(curve);
    showLossCurves();
    refreshLiveTable(); // its time to target, from the curve
    rememberFile(dir);
    if (loaded->cutShort) { // killed mid-run: say so, and how much it holds
        statusBar()->showMessage(tr("Opened %1 — cut short: %2 global batches were recorded before the run was "
                                    "killed; the timeline holds every action up to the last of them")
                                     .arg(dir)
                                     .arg(loaded->metrics.size()),
            15000);
    } else {
        statusBar()->showMessage(tr("Opened %1").arg(dir), 5000);
    }
    return true;
}

void MainWindow::exportConfig()
{
    // Every format at once (TOML, torchrun, SLURM, PyTorch CSV, Megatron, DeepSpeed, torchtitan),
    // into a folder the user picks; the message lists each file and what the export changed.
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export tuned configuration: every format into"));
    if (dir.isEmpty()) {
        return;
    }
    QString report;
    QString error;
    if (!exportAllFormats(configToExport(), dir, &report, &error)) {
        QMessageBox::warning(this, tr("Export failed"), error);
        return;
    }
    QMessageBox::information(this, tr("Exported"), report);
}

bool MainWindow::exportConfigTo(const QString& path, const QString& format, QString* error)
{
    return bs::ui::exportRunConfig(configToExport(), format, path, error);
}

void MainWindow::exportTrace()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export trace"), QStringLiteral("trace.json"), tr("Chrome trace (*.json)"));
    if (path.isEmpty()) {
        return;
    }
    QString error;
    if (!exportTracesTo(path, &error)) {
        QMessageBox::warning(this, tr("Export failed"), error);
    }
}

bool MainWindow::exportTracesTo(const QString& path, QString* error)
{
    // The first run shown goes to `path`, the next ones beside it with "-2", "-3", ... suffixes. The slots hold the
    // runs (predictions have their own lane), so this writes what the runs measured.
    bool wrote = false;
    int written = 1;
    for (int slot = 0; slot < CompareView::kSlots; ++slot) {
        const TimelineIndex* index = m_compare->timeline(slot)->index();
        if (!index || !index->snapshot()) {
            continue;
        }
        QString target = path;
        if (wrote) { // the second run shown gets "-2", the third "-3", ...
            const QString suffix = QStringLiteral("-") + QString::number(++written);
            const qsizetype dot = path.lastIndexOf(QLatin1Char('.'));
            target = dot > 0 ? QString(path.left(dot) + suffix + path.mid(dot)) : QString(path + suffix);
        }
        if (!bs::ui::exportTrace(*index->snapshot(), target, error)) {
            return false;
        }
        wrote = true;
        rememberFile(target);
    }
    if (!wrote && error) {
        *error = tr("nothing to export: no run or prediction is shown");
    }
    return wrote;
}

void MainWindow::exportPanels()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export panels as PNG and SVG"));
    QString error;
    if (!dir.isEmpty() && !exportPanelsTo(dir, &error)) {
        QMessageBox::warning(this, tr("Export failed"), error);
    }
}

bool MainWindow::exportPanelsTo(const QString& dir, QString* error)
{
    const std::pair<QWidget*, const char*> panels[] = {{m_compare, "timelines"}, {m_bubbles, "bubbles"},
        {m_memory, "memory"}, {m_lag, "lag"}, {m_metrics->loss(), "loss"}, {m_metrics->drift(), "drift"},
        {m_metrics->throughput(), "throughput"}};
    m_compare->setExporting(true); // no find box or its query in the pictures
    bool ok = true;
    for (const auto& [widget, name] : panels) {
        const QString base = dir + QLatin1Char('/') + QLatin1String(name);
        if (!exportPng(widget, base + QStringLiteral(".png"), error)
            || !exportSvg(widget, base + QStringLiteral(".svg"), error)) {
            ok = false;
            break;
        }
    }
    m_compare->setExporting(false);
    return ok;
}

int MainWindow::placeOpenedRun(const PredictedRun& run, const runtime::RunConfig& config, const QString& slotText,
    int microBatchSize, runtime::RunDrift drift, runtime::FirstActions first, const std::string& scope)
{
    if (!m_workspace->showsRuns()) {
        enterRunMode(); // the slots showed predictions: clear them before the run goes in
    }
    const int slot = m_workspace->placeOpened(run, config, std::move(drift));
    if (slot < 0) {
        return -1;
    }
    if (!scope.empty()) {
        m_workspace->slot(slot)->scope = scope;
    }
    m_compare->setSlot(slot, toQt(run.label), slotText, run.index);
    m_compare->fitToRuns();
    refreshLiveTable();
    selectSlot(slot);
    calibrateFrom(slot, run, microBatchSize, first); // the what-if now predicts from this run's measured times
    return slot;
}

} // namespace bs::ui
