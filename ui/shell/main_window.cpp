#include "ui/shell/main_window.h"

#include "profiler/analysis/analyze.h"
#include "profiler/io/chrome_trace.h"
#include "runtime/rundir/run_dir_reader.h"
#include "runtime/schedule/catalogue.h"
#include "ui/bridge/simulated_backend.h"
#include "ui/charts/loss_chart.h"
#include "ui/charts/metric_series.h"
#include "ui/charts/metrics_panel.h"
#include "ui/charts/stage_charts.h"
#include "ui/common/format.h"
#include "ui/compare/compare_view.h"
#ifdef BS_HAVE_RUN_SESSION
#include "ui/bridge/run_session_backend.h"
#endif
#include "ui/shell/exporters.h"
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

namespace {

std::vector<int> lagBounds(const PredictedRun& run)
{
    const auto& params = run.result.schedule.params;
    std::vector<int> bounds;
    if (params.name != "paci") {
        return bounds;
    }
    const int a = params.accum > 0 ? params.accum : params.microbatches;
    for (int s = 0; s < params.stages; ++s) {
        bounds.push_back(runtime::paciLagBound(params.stages, s, a, params.extraDepth));
    }
    return bounds;
}

/// Table columns are named by schedule only: both runs share p, a and b.
RunSummary summaryOf(const PredictedRun& run, const profiler::Report& report)
{
    return RunSummary::fromReport(scheduleDisplayName(run.result.schedule.params.name), report,
        run.result.throughputSamplesPerSecond, run.lagBound);
}

QString figuresLine(const profiler::Report& report, double throughput)
{
    return QObject::tr("bubble %1 · %2 seq/s · makespan %3")
        .arg(formatPercent(report.bubbleFraction), QString::number(throughput, 'f', 0),
            formatDuration(static_cast<double>(report.makespan)));
}

} // namespace

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
    , m_engine(new PredictionEngine(this))
    , m_runs(new RunController(this))
{
    setWindowTitle(tr("Bubblescope — pipeline bubbles, memory and drift"));
    buildUi();
    buildActions();
    connect(m_tuning, &TuningPanel::configChanged, this, &MainWindow::onConfigChanged);
    connect(m_engine, &PredictionEngine::predicted, this, &MainWindow::onPredicted);
    connect(m_engine, &PredictionEngine::predictionFailed, this, [this](const QString& message) {
        m_tuning->showError(message);
        statusBar()->showMessage(message, 8000);
    });
    connect(m_metrics, &MetricsPanel::targetLossEdited, this, [this](double target) {
        m_targetLoss = target;
        if (m_mode == Mode::Live) {
            refreshLiveTable();
        }
    });
    connect(m_runs, &RunController::runStarted, this, &MainWindow::onRunStarted);
    connect(m_runs, &RunController::runUpdated, this, &MainWindow::onRunUpdated);
    connect(m_runs, &RunController::runFinished, this, &MainWindow::onRunFinished);
    connect(m_runs, &RunController::runFailed, this,
        [this](int, const QString& message) { statusBar()->showMessage(tr("Run ended: %1").arg(message), 8000); });
    connect(m_runs, &RunController::idle, this, [this] {
        m_stopAction->setEnabled(false);
        m_applyAction->setEnabled(false);
    });
    resize(1600, 1000);
    if (restore) {
        restoreSettings();
    }
}

MainWindow::~MainWindow() = default;

void MainWindow::buildUi()
{
    m_tuning = new TuningPanel(this);
    auto* dock = new QDockWidget(tr("Tuning"), this);
    dock->setObjectName(QStringLiteral("tuningDock"));
    dock->setWidget(m_tuning);
    m_tuning->setMinimumWidth(330);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    m_compare = new CompareView(this);
    for (int slot = 0; slot < 2; ++slot) {
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
    table->setMinimumWidth(400);
    table->setMaximumWidth(470);
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
    file->addSeparator();
    file->addAction(tr("Export tuned &config…"), this, &MainWindow::exportConfig);
    file->addAction(tr("Export &trace (Chrome JSON)…"), this, &MainWindow::exportTrace);
    file->addAction(tr("Export &panels (PNG and SVG)…"), this, &MainWindow::exportPanels);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    QAction* demo = run->addAction(tr("&Demo: PACI vs 1F1B-flush (simulated)"), this, [this] { startDemo({}); });
    if (liveTrainingAvailable()) {
        run->addAction(tr("&Train live: PACI vs 1F1B-flush (LibTorch, CPU)"), this, [this] {
            DemoOptions live;
            live.live = true;
            live.batches = 8;
            startDemo(live);
        });
    }
    m_stopAction = run->addAction(tr("&Stop"), this, &MainWindow::stopRuns);
    m_stopAction->setEnabled(false);
    m_applyAction = run->addAction(tr("&Apply settings to the live run"), this, [this] { (void)applyToLiveRun(); });
    m_applyAction->setObjectName(QStringLiteral("applyAction"));
    m_applyAction->setToolTip(tr("Continue the running LibTorch run with the tuning panel's schedule, a and b "
                                 "from its next global-batch boundary"));
    m_applyAction->setEnabled(false);
    QAction* fit = run->addAction(tr("&Fit timelines"), m_compare, &CompareView::fitToRuns);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
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
    tools->addAction(m_stopAction);
    tools->addAction(m_applyAction);
    tools->addAction(fit);
}

void MainWindow::onConfigChanged(const WhatIfConfig& config)
{
    m_mode = Mode::Prediction;
    WhatIfConfig calibrated = config;
    calibrated.calibration = m_calibration;
    m_engine->request(calibrated);
}

void MainWindow::onPredicted(const PredictionPtr& prediction)
{
    m_tuning->showPrediction(*prediction, m_engine->lastLatencyMs());
    if (m_mode != Mode::Prediction) {
        return;
    }
    const auto& a = prediction->primary;
    const QString predicted = prediction->config.calibration
        ? tr("predicted from times measured in %1 · ").arg(toQt(prediction->config.calibration->source))
        : tr("predicted · ");
    m_compare->setSlot(0, toQt(a.label),
        predicted + figuresLine(a.result.report, a.result.throughputSamplesPerSecond), a.index);
    std::vector<RunSummary> summaries{summaryOf(a, a.result.report)};
    if (prediction->baseline) {
        const auto& b = *prediction->baseline;
        m_compare->setSlot(1, toQt(b.label),
            predicted + figuresLine(b.result.report, b.result.throughputSamplesPerSecond), b.index);
        summaries.push_back(summaryOf(b, b.result.report));
    } else {
        m_compare->setSlot(1, tr("no comparison"), QString(), nullptr);
    }
    m_compare->setSummaries(std::move(summaries));
    m_compare->fitToRuns();
    showCharts(a, prediction->config.memoryBudgetBytes);
}

void MainWindow::showCharts(const PredictedRun& run, std::int64_t budget)
{
    StageChartData chart;
    chart.title = toQt(scheduleDisplayName(run.result.schedule.params.name));
    chart.report = run.result.report;
    chart.staticBytes = run.staticBytes;
    chart.paramBytes = run.paramBytes;
    chart.lagBound = lagBounds(run);
    chart.memoryBudgetBytes = budget;
    m_bubbles->setData(chart);
    m_memory->setData(chart);
    m_lag->setData(chart);
    m_compare->setStageReport(run.result.report);
}

void MainWindow::startDemo(const DemoOptions& options)
{
    m_runs->stop();
    WhatIfConfig config; // 8-stage tiny GPT on the CPU profile, a = 8, b = 8
    config.batches = options.batches;
    config.schedule = options.schedule;
    config.baseline = options.baseline;
    m_tuning->setConfig(config);
    m_mode = Mode::Live;
    m_live = {};
    m_liveStarted = 0;
    m_liveBudget = config.memoryBudgetBytes;
    m_queuedPlans.clear();
    for (const std::string& schedule : {options.schedule, options.baseline}) {
        auto plan = predictRun(config, schedule);
        if (!plan) {
            statusBar()->showMessage(toQt(plan.error().describe()), 8000);
            continue;
        }
        const std::string label = plan->label;
        m_queuedPlans.push_back(*plan);
#ifdef BS_HAVE_RUN_SESSION
        if (options.live) {
            WhatIfConfig runConfig = config;
            runConfig.schedule = schedule;
            runtime::RunConfig rc = toRunConfig(runConfig);
            rc.training.steps = options.batches;
            rc.training.evalInterval = 0;
            auto backend = std::make_unique<RunSessionBackend>(label, rc);
            backend->setWarmUp(schedule == options.schedule); // the first run pays no start-up costs
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
    m_checks = {};
    m_calibratedBatches = {};
    m_targetLoss = 0;
    m_metrics->setRuns({});
    m_compare->setSlot(0, tr("waiting"), QString(), nullptr);
    m_compare->setSlot(1, tr("waiting"), QString(), nullptr);
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
    return m_live[0] && m_live[1] && m_live[0]->latest && m_live[1]->latest && m_live[1]->latest->finished;
}

void MainWindow::stopRuns()
{
    m_runs->stop();
}

void MainWindow::onRunStarted(int run, const QString& label)
{
    if (m_queuedPlans.empty()) {
        return;
    }
    const int slot = m_liveStarted++ % 2;
    m_runSlot[run] = slot;
    m_live[static_cast<std::size_t>(slot)] = LiveRun{m_queuedPlans.front(), nullptr, m_liveMeasured, true};
    m_queuedPlans.pop_front();
    m_applyAction->setEnabled(m_liveMeasured); // only a live LibTorch run can change its settings
    m_compare->timeline(slot)->setMarkers({});
    statusBar()->showMessage(tr("Running %1…").arg(label));
}

void MainWindow::onRunUpdated(int run, const RunUpdatePtr& update)
{
    const auto it = m_runSlot.find(run);
    if (it != m_runSlot.end()) {
        calibrateWhileRunning(it->second, *update); // also while the sliders show predictions
    }
    if (m_mode != Mode::Live || it == m_runSlot.end()) {
        return;
    }
    auto& live = m_live[static_cast<std::size_t>(it->second)];
    live->latest = update;
    const BubbleRules rules{!live->plan.result.schedule.asynchronous, live->plan.result.schedule.params.microbatches,
        update->laterSettings};
    const QString source = live->measured ? tr("live · LibTorch") : tr("live · simulated backend");
    m_compare->setSlotText(it->second, toQt(update->label),
        source + QStringLiteral(" · ") + QString::number(static_cast<int>(update->progress * 100))
            + QStringLiteral(" %"));
    m_indexers[static_cast<std::size_t>(it->second)]->request(update->trace, rules);
    showLoss(it->second, *update);
}

void MainWindow::onLiveIndexBuilt(int slot, const BuiltTimeline& timeline)
{
    const auto& live = m_live[static_cast<std::size_t>(slot)];
    if (m_mode != Mode::Live || !live || !live->indexing) {
        return; // the run finished (its final index is shown) or the slot shows something else now
    }
    m_compare->timeline(slot)->setIndex(timeline.index);
    m_compare->timeline(slot)->setMarkers(timeline.markers);
}

Status MainWindow::applyToLiveRun()
{
    const runtime::RunConfig wanted = toRunConfig(m_tuning->config());
    ApplyRequest request;
    request.schedule = wanted.schedule.name;
    request.microbatches = wanted.pipeline.microbatches;
    request.accum = wanted.pipeline.accum;
    request.microBatchSize = wanted.pipeline.microBatchSize;
    request.stages = wanted.pipeline.stages;
    request.model = wanted.model.preset;
    request.device = wanted.device.name;
    const Status s = m_runs->apply(request);
    if (s) {
        m_mode = Mode::Live; // back from the slider's prediction to the run being changed
        statusBar()->showMessage(tr("Apply: %1 from the next global-batch boundary")
                                     .arg(toQt(runLabel(request.schedule, request.microbatches, request.microBatchSize))),
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
    if (m_mode != Mode::Live || it == m_runSlot.end()) {
        return;
    }
    auto& live = m_live[static_cast<std::size_t>(it->second)];
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
            ? static_cast<double>(params.microbatches * params.batches * m_tuning->config().microBatchSize) / seconds
            : 0.0;
        live->plan.index = TimelineIndex::build(update->trace,
            BubbleRules{!live->plan.result.schedule.asynchronous, params.microbatches, update->laterSettings});
        calibrateFrom(it->second, live->plan, m_tuning->config().microBatchSize);
    }
    const profiler::Report& report = update->report ? *update->report : live->plan.result.report;
    m_compare->setSlot(it->second, toQt(update->label),
        (live->measured ? tr("finished · LibTorch · ") : tr("finished · simulated backend · "))
            + figuresLine(report, live->plan.result.throughputSamplesPerSecond),
        live->plan.index);
    m_compare->fitToRuns();
    refreshLiveTable();
    if (it->second == 0) {
        showCharts(live->plan, m_liveBudget);
        Prediction figures;
        figures.config = m_tuning->config();
        figures.primary = live->plan;
        m_tuning->showPrediction(figures, 0);
    }
    statusBar()->showMessage(tr("%1 finished").arg(toQt(update->label)), 5000);
}

void MainWindow::refreshLiveTable()
{
    std::vector<RunSummary> summaries;
    for (const auto& live : m_live) {
        if (live && live->latest && live->latest->finished) {
            const auto& report = live->latest->report ? *live->latest->report : live->plan.result.report;
            RunSummary summary = summaryOf(live->plan, report);
            // The same number the loss panel marks on its virtual-time axis.
            const auto curve = std::find_if(m_lossCurves.rbegin(), m_lossCurves.rend(),
                [&](const LossCurve& c) { return c.label == toQt(live->plan.label); });
            if (curve != m_lossCurves.rend()) {
                summary.timeToTargetS = timeToTarget(curve->samples, m_targetLoss, TimeAxis::Virtual).value_or(-1.0);
            }
            summaries.push_back(std::move(summary));
        }
    }
    m_compare->setSummaries(std::move(summaries));
}

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
    const auto fail = [error](const Error& e) {
        if (error) {
            *error = toQt(e.describe());
        }
        return false;
    };
    auto contents = runtime::readRunDir(fromQt(dir));
    if (!contents) {
        return fail(contents.error());
    }
    auto trace = runtime::readRunTrace(*contents);
    if (!trace) {
        return fail(trace.error());
    }
    auto schedule = runtime::makeSchedule(runtime::toScheduleParams(contents->config));
    if (!schedule) {
        return fail(schedule.error());
    }
    PredictedRun run;
    run.label = fromQt(QFileInfo(dir).fileName()) + " (" + scheduleDisplayName(contents->config.schedule.name) + ")";
    run.result.schedule = *schedule;
    run.result.trace = *trace;
    profiler::AnalysisOptions options; // memory in micro-batch units unless summary.json has bytes
    options.microbatchesPerBatch = contents->config.pipeline.microbatches;
    options.synchronous = !schedule->asynchronous;
    options.stashesWeights =
        schedule->weights == runtime::WeightPolicy::Stash || schedule->weights == runtime::WeightPolicy::TwoVersions;
    run.result.report = profiler::analyze(*run.result.trace, options);
    const double seconds = toSeconds(run.result.report.makespan);
    if (seconds > 0) {
        run.result.throughputSamplesPerSecond = static_cast<double>(contents->config.pipeline.microbatches)
            * contents->config.pipeline.microBatchSize * contents->config.training.steps / seconds;
    }
    // readRunDir checked the fields' types and ranges (run_dir_schema.h); still, read defensively.
    if (contents->summary && contents->summary->contains("per_stage") && (*contents->summary)["per_stage"].is_array()) {
        const auto& stages = (*contents->summary)["per_stage"];
        for (std::size_t s = 0; s < stages.size() && s < run.result.report.perStage.size(); ++s) {
            const auto it = stages[s].is_object() ? stages[s].find("peak_memory_bytes") : stages[s].end();
            if (stages[s].is_object() && it != stages[s].end() && it->is_number_integer()) {
                run.result.report.perStage[s].peakMemoryBytes = it->get<std::int64_t>();
            }
        }
    }
    run.lagBound = runtime::driftBound(*schedule, run.result.report);
    run.index = TimelineIndex::build(run.result.trace, BubbleRules{options.synchronous, options.microbatchesPerBatch, {}});
    LossCurve curve;
    curve.label = toQt(run.label);
    for (const auto& record : contents->metrics) {
        if (auto sample = metricSampleFromJson(record)) {
            curve.samples.push_back(std::move(*sample));
        }
    }
    m_lossCurves.push_back(std::move(curve));
    m_targetLoss = contents->config.training.targetLoss.value_or(m_targetLoss);
    m_metrics->setRuns(m_lossCurves, m_targetLoss);

    m_mode = Mode::Live;
    const int slot = m_opened++ % 2;
    auto final = std::make_shared<RunUpdate>();
    final->label = run.label;
    final->trace = run.result.trace;
    final->report = run.result.report;
    final->finished = true;
    m_live[static_cast<std::size_t>(slot)] = LiveRun{run, final};
    m_compare->setSlot(slot, toQt(run.label),
        tr("opened · ") + figuresLine(run.result.report, run.result.throughputSamplesPerSecond), run.index);
    m_compare->fitToRuns();
    refreshLiveTable();
    if (slot == 0) {
        showCharts(run, 0);
    }
    calibrateFrom(slot, run, contents->config.pipeline.microBatchSize);
    rememberFile(dir);
    statusBar()->showMessage(tr("Opened %1").arg(dir), 5000);
    return true;
}

void MainWindow::exportConfig()
{
    const QStringList filters = configExportFilters();
    QString filter = filters.value(0);
    const QString path = QFileDialog::getSaveFileName(this, tr("Export tuned configuration"),
        QStringLiteral("bubblescope.toml"), filters.join(QStringLiteral(";;")), &filter);
    if (path.isEmpty()) {
        return;
    }
    QString error;
    if (!bs::ui::exportConfig(m_tuning->config(), formatOfFilter(filter), path, &error)) {
        QMessageBox::warning(this, tr("Export failed"), error);
        return;
    }
    rememberFile(path);
}

void MainWindow::exportTrace()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export trace"), QStringLiteral("trace.json"), tr("Chrome trace (*.json)"));
    if (path.isEmpty()) {
        return;
    }
    // The top run goes to `path`, the bottom one next to it with a "-2" suffix.
    for (int slot = 0; slot < CompareView::kSlots; ++slot) {
        const TimelineIndex* index = m_compare->timeline(slot)->index();
        if (!index || !index->snapshot()) {
            continue;
        }
        QString target = path;
        if (slot > 0) {
            const qsizetype dot = path.lastIndexOf(QLatin1Char('.'));
            target = dot > 0 ? QString(path.left(dot) + QStringLiteral("-2") + path.mid(dot))
                             : QString(path + QStringLiteral("-2"));
        }
        QString error;
        if (!bs::ui::exportTrace(*index->snapshot(), target, &error)) {
            QMessageBox::warning(this, tr("Export failed"), error);
            return;
        }
        rememberFile(target);
    }
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
    for (const auto& [widget, name] : panels) {
        const QString base = dir + QLatin1Char('/') + QLatin1String(name);
        if (!exportPng(widget, base + QStringLiteral(".png"), error)
            || !exportSvg(widget, base + QStringLiteral(".svg"), error)) {
            return false;
        }
    }
    return true;
}

void MainWindow::calibrateWhileRunning(int slot, const RunUpdate& update)
{
    const auto index = static_cast<std::size_t>(slot);
    const auto& live = m_live[index];
    if (!live || !live->measured || !update.trace || update.metrics.size() == m_calibratedBatches[index]
        || (slot != 0 && m_calibration)) {
        return;
    }
    m_calibratedBatches[index] = update.metrics.size();
    const auto& params = live->plan.result.schedule.params;
    if (auto calibration =
            calibrationFromTrace(*update.trace, params.stages, m_tuning->config().microBatchSize, update.label)) {
        m_calibration = *calibration;
        m_check->setCalibration(m_calibration);
    }
}

void MainWindow::calibrateFrom(int slot, const PredictedRun& run, int microBatchSize)
{
    if (!run.result.trace) {
        return;
    }
    const auto& params = run.result.schedule.params;
    auto calibration = calibrationFromTrace(*run.result.trace, params.stages, microBatchSize, run.label);
    if (!calibration) {
        statusBar()->showMessage(tr("Cannot calibrate from %1: %2").arg(toQt(run.label), toQt(calibration.error().describe())), 8000);
        return;
    }
    // The calibrated prediction of the run's own settings, next to what it measured.
    WhatIfConfig own = m_tuning->config();
    own.stages = params.stages;
    own.accum = params.microbatches;
    own.microBatchSize = microBatchSize;
    own.batches = std::max(1, params.batches);
    own.calibration = *calibration;
    if (auto predicted = predictRun(own, params.name)) {
        m_checks[static_cast<std::size_t>(slot)] = checkPrediction(run.label, run.label, predicted->result.report,
            predicted->result.throughputSamplesPerSecond, run.result.report, run.result.throughputSamplesPerSecond,
            own.batches);
    }
    if (slot == 0 || !m_calibration) {
        m_calibration = *calibration;
    }
    std::vector<PredictionCheck> checks;
    for (const auto& check : m_checks) {
        if (check) {
            checks.push_back(*check);
        }
    }
    m_check->setChecks(checks);
    m_check->setCalibration(m_calibration);
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
