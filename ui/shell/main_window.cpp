#include "ui/shell/main_window.h"

#include "profiler/analysis/analyze.h"
#include "profiler/io/chrome_trace.h"
#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/plan/schedule/catalogue.h"
#include "ui/bridge/simulated_backend.h"
#include "ui/charts/loss_chart.h"
#include "ui/charts/metric_series.h"
#include "ui/charts/metrics_panel.h"
#include "ui/charts/stage_charts.h"
#include "ui/common/format.h"
#include "ui/common/wheel_guard.h"
#include "ui/compare/compare_view.h"
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
#include <QComboBox>
#include <QDockWidget>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>

#include <algorithm>
#include <utility>

namespace bs::ui {



QString shortcutHelpText()
{
    return QObject::tr("<table cellspacing='4'>"
                       "<tr><td colspan='2'><b>Timeline</b> (click it first)</td></tr>"
                       "<tr><td>W / S, ↑ / ↓, + / −</td><td>zoom in / out</td></tr>"
                       "<tr><td>A / D, ← / →</td><td>pan earlier / later</td></tr>"
                       "<tr><td>Home, F</td><td>fit the whole run</td></tr>"
                       "<tr><td>wheel, drag</td><td>zoom at the cursor, pan</td></tr>"
                       "<tr><td>click a run</td><td>select it: panel, charts and exports follow</td></tr>"
                       "<tr><td colspan='2'><b>Window</b></td></tr>"
                       "<tr><td>Ctrl+O</td><td>open a run directory</td></tr>"
                       "<tr><td>Ctrl+F</td><td>find a stage, action or micro-batch</td></tr>"
                       "<tr><td>F1</td><td>this list</td></tr>"
                       "<tr><td>Ctrl+Q</td><td>quit</td></tr></table>");
}

bool liveTrainingAvailable()
{
#ifdef BS_HAVE_RUN_SESSION
    return true;
#else
    return false;
#endif
}

MainWindow::MainWindow(bool restore, QWidget* parent)
    : QMainWindow(parent)
    , m_workspace(new RunWorkspace(this))
    , m_engine(new PredictionEngine(this))
    , m_runs(new RunController(this))
{
    // The plain name: the platform appends the application's display name to any other title
    // ("Bubblescope — … — Bubblescope"), but not to a title that already ends with it.
    setWindowTitle(QStringLiteral("Bubblescope"));
    buildUi();
    buildActions();
    connect(m_tuning, &TuningPanel::configChanged, this, &MainWindow::onConfigChanged);
    connect(m_tuning, &TuningPanel::calibrateRequested, this, [this] { (void)startCalibrationPass(); });
    connect(m_engine, &PredictionEngine::predicted, this, &MainWindow::onPredicted);
    connect(m_engine, &PredictionEngine::predictionFailed, this, [this](const QString& message) {
        m_tuning->showError(message);
        statusBar()->showMessage(message, 8000);
    });
    connect(m_metrics, &MetricsPanel::targetLossEdited, this, [this](double target) {
        m_targetLoss = target;
        if (m_workspace->showsRuns()) {
            refreshLiveTable();
        }
    });
    connect(m_compare, &CompareView::slotClicked, this, &MainWindow::selectSlot);
    connect(m_workspace, &RunWorkspace::calibrationChanged, this, &MainWindow::onCalibrationChanged);
    connect(m_runs, &RunController::runStarted, this, &MainWindow::onRunStarted);
    connect(m_runs, &RunController::runUpdated, this, &MainWindow::onRunUpdated);
    connect(m_runs, &RunController::runFinished, this, &MainWindow::onRunFinished);
    connect(m_runs, &RunController::runFailed, this, [this](int run, const QString& message) {
        statusBar()->showMessage(tr("Run ended: %1").arg(message), 8000);
        // A run that never produced anything (the runtime refused it) gives its slot back; the
        // panel says why instead of "is running" (the runs shown are untouched).
        const auto it = m_runSlot.find(run);
        if (it != m_runSlot.end() && m_workspace->showsRuns() && m_workspace->slot(it->second)
            && !m_workspace->slot(it->second)->latest) {
            const int slot = it->second;
            m_tuning->clearFigures(tr("%1 did not run: %2").arg(toQt(m_workspace->slot(slot)->plan.label), message));
            m_workspace->remove(slot);
            m_compare->setSlot(slot, QString(), QString(), nullptr);
            m_runSlot.erase(it);
        }
    });
    connect(m_runs, &RunController::idle, this, [this] {
        m_stopAction->setEnabled(false);
        m_applyAction->setEnabled(false);
        if (std::exchange(m_calibrating, false)) {
            const CalibrationPtr calibration = this->calibration();
            statusBar()->showMessage(calibration
                    ? tr("Calibration done: predictions now use %1")
                          .arg(toQt(calibration->sourceFor(fromQt(m_tuning->scheduleBox()->currentData().toString()))))
                    : tr("Calibration pass ended without a measured trace"),
                15000);
        }
    });
    resize(1600, 1000);
    if (restore) {
        restoreSettings();
    }
    fitToScreen(); // a first launch, or a geometry saved on a larger screen, stays on this one
}

void MainWindow::fitToScreen()
{
    const QScreen* on = screen() != nullptr ? screen() : QGuiApplication::primaryScreen();
    if (on == nullptr) {
        return;
    }
    const QRect available = on->availableGeometry();
    // The frame (title bar, borders) is outside the widget's geometry; before the window is shown
    // there is none yet, so leave room for a usual one.
    const QSize frame = isVisible() ? frameGeometry().size() - geometry().size() : QSize(8, 36);
    const QSize room = available.size() - frame;
    const QSize wanted = size().boundedTo(room);
    if (wanted != size()) {
        resize(wanted);
    }
    QRect placed = frameGeometry();
    placed.setSize(wanted + frame);
    if (!available.contains(placed)) {
        placed.moveLeft(std::clamp(placed.left(), available.left(), available.right() + 1 - placed.width()));
        placed.moveTop(std::clamp(placed.top(), available.top(), available.bottom() + 1 - placed.height()));
        move(placed.topLeft());
    }
}

MainWindow::~MainWindow() = default;

void MainWindow::buildUi()
{
    m_tuning = new TuningPanel(this);
    // Suggest's time to target: the noise scale the opened runs of the model shown measured.
    m_tuning->setStatisticsRuns([this] { return m_workspace->statisticsRuns(currentScope()); });
    auto* dock = new QDockWidget(tr("Tuning"), this);
    dock->setObjectName(QStringLiteral("tuningDock"));
    // In a scroll area: on a 1280x800 screen the panel (controls, figures, Suggest) is taller than
    // the dock, and a dock squeezes its widgets until their text is cut; a scroll area keeps them whole.
    auto* scroll = new QScrollArea(dock);
    scroll->setObjectName(QStringLiteral("tuningScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(m_tuning);
    scrollPanelOnWheel(m_tuning, scroll); // the wheel scrolls the panel; a slider takes it once focused
    dock->setWidget(scroll);
    // As narrow as its controls allow (the window fits 1100 px), never narrower: an explicit
    // minimum under the layout's clipped the longest schedule name ("interleaved-1f1b").
    scroll->setMinimumWidth(
        std::max(270, m_tuning->minimumSizeHint().width()) + scroll->verticalScrollBar()->sizeHint().width());
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    m_compare = new CompareView(this);
    for (int slot = 0; slot < RunWorkspace::kSlots; ++slot) {
        auto* indexer = new AsyncIndexBuilder(this);
        connect(indexer, &AsyncIndexBuilder::built, this,
            [this, slot](const BuiltTimeline& timeline) { onLiveIndexBuilt(slot, timeline); });
        m_indexers[static_cast<std::size_t>(slot)] = indexer;
    }
    m_bubbles = new BubbleChartView(this);
    m_memory = new MemoryChartView(this);
    m_lag = new LagChartView(this);
    m_metrics = new MetricsPanel(this);
    m_check = new PredictionCheckView(this);
    auto* charts = new QWidget(this);
    auto* row = new QHBoxLayout(charts);
    row->setContentsMargins(0, 0, 0, 0);
    QWidget* table = m_compare->tablePanel();
    // CompareView sizes the table panel to its columns (every run column visible whole).
    row->addWidget(table);
    table->setVisible(true);
    // Chart area: per-stage charts, training metrics over time, prediction vs measured.
    auto* stageCharts = new QWidget(this);
    auto* stageRow = new QHBoxLayout(stageCharts);
    stageRow->setContentsMargins(0, 0, 0, 0);
    for (QWidget* w : {static_cast<QWidget*>(m_bubbles), static_cast<QWidget*>(m_memory), static_cast<QWidget*>(m_lag)}) {
        w->setMinimumHeight(220);
        stageRow->addWidget(w, 1);
    }
    auto* tabs = new QTabWidget(this);
    tabs->setObjectName(QStringLiteral("chartTabs"));
    tabs->setDocumentMode(true);
    tabs->addTab(stageCharts, tr("Stages"));
    tabs->setTabToolTip(0, tr("Per stage: bubbles by cause, memory, version lag"));
    tabs->addTab(m_metrics, tr("Loss · drift · throughput"));
    tabs->addTab(m_check, tr("Prediction check"));
    tabs->setTabToolTip(2, tr("Calibrated prediction vs what the run measured"));
    // The charts take what the table leaves (their own hint would squeeze its columns), never
    // less than their minimum: below that the table scrolls.
    tabs->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    tabs->setMinimumWidth(tabs->minimumSizeHint().width()); // an ignored hint drops the minimum hint too
    row->addWidget(tabs, 1);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("mainSplitter"));
    split->addWidget(m_compare);
    split->addWidget(charts);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    setCentralWidget(split);
    statusBar()->showMessage(tr("Move a slider to predict; Run ▸ Demo replays PACI and 1F1B-flush."));
}

void MainWindow::buildActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open run directory…"), QKeySequence::Open, this, &MainWindow::openRunDialog);
    file->addAction(tr("&Resume run directory…"), this, &MainWindow::resumeRunDialog); // from its checkpoint
    // The runs opened before (rememberFile), newest first, read when the menu opens.
    m_recentMenu = file->addMenu(tr("Open &recent"));
    m_recentMenu->setObjectName(QStringLiteral("recentMenu"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
    fillRecentMenu();
    file->addSeparator();
    file->addAction(tr("Export tuned &config…"), this, &MainWindow::exportConfig);
    file->addAction(tr("Export &trace (Chrome JSON)…"), this, &MainWindow::exportTrace);
    file->addAction(tr("Export &panels (PNG and SVG)…"), this, &MainWindow::exportPanels);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    QAction* demo = run->addAction(tr("&Replay simulated demo: PACI vs 1F1B-flush"), this, [this] { startDemo({}); });
    demo->setIconText(tr("Replay simulation"));
    QAction* trainLive = nullptr;
    if (liveTrainingAvailable()) {
        // The panel's settings, in a free slot: the runs shown stay (Run ▸ Remove run clears one).
        trainLive =
            run->addAction(tr("&Train live: the panel's settings (LibTorch)"), this, [this] { (void)startLiveRun(); });
        trainLive->setObjectName(QStringLiteral("trainLiveAction"));
        trainLive->setToolTip(tr("Train the tuning panel's schedule, p, a, b and model with LibTorch for its "
                                 "batches, next to the runs shown"));
        m_trainLiveAction = trainLive;
    }
    QAction* calibrate =
        run->addAction(tr("&Calibrate from short runs at two b"), this, [this] { (void)startCalibrationPass(); });
    calibrate->setObjectName(QStringLiteral("calibrateAction"));
    calibrate->setIconText(tr("Calibrate"));
    calibrate->setEnabled(liveTrainingAvailable());
    calibrate->setToolTip(liveTrainingAvailable()
            ? tr("Train the panel's settings for %1 global batches at b and 2b with LibTorch; every prediction "
                 "is then calibrated from what this machine measured")
                  .arg(kCalibrationBatches)
            : tr("Calibrate needs the training runtime (this build has none)"));
    run->addAction(tr("&Balance stages…"), this, [this] { (void)openBalanceStages(); })
        ->setObjectName(QStringLiteral("balanceStagesAction")); // main_window_balance.cpp
    m_stopAction = run->addAction(tr("&Stop"), this, &MainWindow::stopRuns);
    m_stopAction->setEnabled(false);
    m_applyAction = run->addAction(tr("&Apply settings to the live run"), this, [this] { (void)applyToLiveRun(); });
    m_applyAction->setObjectName(QStringLiteral("applyAction"));
    m_applyAction->setToolTip(tr("Continue the running LibTorch run with the tuning panel's schedule, a and b "
                                 "from its next global-batch boundary"));
    m_applyAction->setEnabled(false);
    m_removeRunAction = run->addAction(tr("&Remove run"), this, [this] {
        QString error;
        if (!removeRun(m_workspace->selected(), &error)) {
            statusBar()->showMessage(error, 8000);
        }
    });
    m_removeRunAction->setObjectName(QStringLiteral("removeRunAction"));
    m_removeRunAction->setToolTip(
        tr("Remove the selected run from the screen (runs stay until removed; %1 fit)").arg(RunWorkspace::kSlots));
    QAction* fit = run->addAction(tr("&Fit timelines"), m_compare, &CompareView::fitToRuns);
    // Per-stage charts: both compared runs side by side (one bar per run at each stage), or only
    // the selected one.
    m_bothRunsAction = run->addAction(tr("Stage charts show &both runs"));
    m_bothRunsAction->setObjectName(QStringLiteral("bothRunsAction"));
    m_bothRunsAction->setCheckable(true);
    m_bothRunsAction->setChecked(true);
    connect(m_bothRunsAction, &QAction::toggled, this, [this] {
        const int selected = std::max(0, m_workspace->selected());
        if (const auto& shown = m_workspace->slot(selected); m_workspace->showsRuns() && shown && shown->finished()) {
            showCharts(shown->plan, m_liveBudget);
        }
    });
    run->addAction(tr("&Find in the timeline…"), QKeySequence::Find, this, [this] {
        m_compare->findBox()->setFocus();
        m_compare->findBox()->selectAll();
    });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard shortcuts"), QKeySequence::HelpContents, this, [this] {
        QMessageBox::information(this, tr("Keyboard shortcuts"), shortcutHelpText());
    });
    help->addAction(tr("&About Bubblescope"), this, [this] {
        QMessageBox::about(this, tr("About Bubblescope"),
            tr("<b>Bubblescope %1</b><p>Profiler and tuner for pipeline-parallel training: "
               "where the pipeline idles, how much memory each stage holds, and how far "
               "weights drift (PACI, 1F1B, GPipe, zero-bubble).</p>")
                .arg(QApplication::applicationVersion()));
    });

    QToolBar* tools = addToolBar(tr("Run"));
    tools->setObjectName(QStringLiteral("runToolbar"));
    tools->addAction(demo);
    if (trainLive) {
        trainLive->setIconText(tr("Train live"));
        tools->addAction(trainLive);
    }
    tools->addAction(calibrate);
    tools->addAction(m_stopAction);
    tools->addAction(m_applyAction);
    tools->addAction(fit);
}

void MainWindow::onConfigChanged(const WhatIfConfig& config)
{
    // The calibration of the model and device the panel now shows (another model's never applies).
    const bool rescoped = followScope();
    if (const auto& refused = m_tuning->refusal()) {
        // What the runtime would refuse is not predicted: the reason stands beside its control,
        // and nothing shown (runs, their columns) is touched.
        m_tuning->clearFigures(
            tr("Not predicted: the runtime would refuse these settings (%1).").arg(toQt(refused->message)));
        clearPredictionLane();
        if (!m_workspace->showsRuns()) {
            m_compare->setSlot(0, tr("refused"), toQt(refused->describe()), nullptr);
            m_compare->setSlot(1, tr("no comparison"), QString(), nullptr);
            m_compare->setSummaries({});
        }
        statusBar()->showMessage(tr("Refused: %1").arg(toQt(refused->describe())), 8000);
        return;
    }
    m_engine->request(rescoped ? m_tuning->config() : config);
}

void MainWindow::onPredicted(const PredictionPtr& prediction)
{
    if (m_tuning->refusal()) {
        return; // asked before the settings moved to ones the runtime refuses
    }
    m_tuning->showPrediction(*prediction, m_engine->lastLatencyMs());
    if (m_workspace->showsRuns()) {
        showPredictionLane(*prediction); // runs stay in their slots; the prediction gets its own lane
        return;
    }
    const auto& a = prediction->primary;
    const auto predicted = [&](const PredictedRun& run) -> QString {
        const auto& schedule = run.result.schedule.params.name;
        return tr("predicted · %1 · ")
                   .arg(prediction->config.calibration
                           ? toQt(prediction->config.calibration->sourceFor(schedule))
                           : tr("device profile %1").arg(toQt(prediction->config.deviceProfile)))
            + predictedFiguresLine(run);
    };
    const auto summary = [](const PredictedRun& run) {
        ComparisonRow s = summaryOf(run, run.result.report, FiguresOf::Prediction);
        s.label += " · predicted";
        return s;
    };
    m_compare->setSlot(0, toQt(a.label), predicted(a), a.index);
    std::vector<ComparisonRow> summaries{summary(a)};
    if (prediction->baseline) {
        const auto& b = *prediction->baseline;
        m_compare->setSlot(1, toQt(b.label), predicted(b), b.index);
        summaries.push_back(summary(b));
    } else {
        m_compare->setSlot(1, tr("no comparison"), QString(), nullptr);
    }
    m_compare->setSummaries(std::move(summaries));
    m_compare->fitToRuns();
    showCharts(a, prediction->config.memoryBudgetBytes);
}

namespace {
StageChartData chartDataOf(const PredictedRun& run, std::int64_t budget)
{
    StageChartData chart;
    chart.title = toQt(scheduleDisplayName(run.result.schedule.params.name));
    chart.report = run.result.report;
    chart.staticBytes = run.staticBytes;
    chart.paramBytes = run.paramBytes;
    chart.lagBound = runtime::lagBounds(run.result.schedule.params);
    chart.memoryBudgetBytes = budget;
    // The lanes are ranks when the trace says it has several stages per lane (the simulator and the
    // runtime put a rank's chunks on one lane); an imported job's trace has a lane per stage.
    chart.perRank = !run.result.schedule.onePerRank() && run.result.trace && run.result.trace->meta().stagesPerLane > 1;
    chart.memoryKnown = run.memoryKnown;
    return chart;
}
} // namespace

void MainWindow::showCharts(const PredictedRun& run, std::int64_t budget)
{
    std::vector<StageChartData> runs;
    if (m_bothRunsAction->isChecked() && m_workspace->showsRuns()) { // every finished run, in slot order
        for (const auto& slot : m_workspace->slots()) {
            if (slot && slot->finished()) {
                runs.push_back(chartDataOf(slot->plan, budget));
            }
        }
    }
    if (runs.size() < 2) {
        runs = {chartDataOf(run, budget)};
    }
    m_bubbles->setRuns(runs);
    m_memory->setRuns(runs);
    m_lag->setRuns(runs);
    m_compare->setStageReport(run.result.report);
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    m_runs->stop();
    saveSettings();
    event->accept();
}

void MainWindow::saveSettings() const
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("tuning/config"), configToToml(m_tuning->config()));
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    if (auto config = configFromToml(settings.value(QStringLiteral("tuning/config")).toString())) {
        m_tuning->setConfig(*config);
    }
}

QStringList MainWindow::recentFiles()
{
    return QSettings().value(QStringLiteral("recent/files")).toStringList();
}

void MainWindow::fillRecentMenu()
{
    m_recentMenu->clear();
    QStringList recent = recentFiles();
    // Exported files are remembered too (the file dialogs start there); only folders open as runs.
    recent.removeIf([](const QString& path) { return !QFileInfo(path).isDir(); });
    for (const QString& path : recent) {
        m_recentMenu->addAction(path, this, [this, path] {
            QString error;
            if (!openRunDirectory(path, &error)) {
                QMessageBox::warning(this, tr("Cannot open run"), error);
            }
        });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::rememberFile(const QString& path)
{
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recent/files")).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > 8) {
        recent.removeLast();
    }
    settings.setValue(QStringLiteral("recent/files"), recent);
}

} // namespace bs::ui
