#pragma once
// The application window: tuning controls on the left, up to four runs on one time axis
// with the comparison table, and the per-stage charts underneath. A run slot shows either a live
// run (RunController over a simulated backend, or a RunSession when the LibTorch runtime is built),
// an opened run directory or imported job, or the prediction for the current what-if settings.

#include "ui/bridge/run_controller.h"
#include "ui/charts/loss_chart.h"
#include "ui/models/comparison_row.h"
#include "ui/shell/run_workspace.h"
#include "ui/tuning/calibration.h"
#include "ui/tuning/prediction_engine.h"

#include <QMainWindow>
#include <QMenu>
#include <QStringList>

#include <array>
#include <deque>
#include <map>
#include <optional>

namespace bs::ui {

class AsyncIndexBuilder;
struct BuiltTimeline;
class BalanceStagesDialog;
class BubbleChartView;
class CompareView;
class LagChartView;
class LossChartView;
class MemoryChartView;
class MetricsPanel;
class PredictionCheckView;
class TuningPanel;

struct DemoOptions
{
    int batches = 4; ///< global batches per demo run
    double wallSeconds = 4.0; ///< replay pacing per run; 0 = instant
    std::string schedule = "paci";
    std::string baseline = "1f1b";
    /// Train for real with the LibTorch runtime (RunSession) instead of replaying the simulator.
    /// Only in builds with the runtime (BS_HAVE_RUN_SESSION); ignored otherwise.
    bool live = false;
};

/// The Help ▸ Keyboard shortcuts text (rich text).
QString shortcutHelpText();

/// The note shown when a live CPU run times more stages than the machine has free cores (load
/// average); empty when they fit.
QString cpuContentionNote(int stages);

/// True when this build can train live (the runtime's RunSession is linked in).
bool liveTrainingAvailable();

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    /// `restoreSettings` = false gives the default layout (screenshots, tests).
    explicit MainWindow(bool restoreSettings = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Plays the demo: 8-stage tiny GPT, PACI (a=8), then 1F1B-flush, live (one after the other),
    /// in two free slots (the runs shown stay). False, with the reason in the status bar, when
    /// fewer than two slots are free.
    bool startDemo(const DemoOptions& options);
    /// Run ▸ Train live: trains the tuning panel's settings (schedule, p, v, a, b, model, device,
    /// its batch count) with LibTorch in a free slot; the runs shown stay. Refused (false, nothing
    /// stopped or cleared) when the pre-flight refuses the settings (the reason beside the control
    /// and in the status bar), when no slot is free, or in a build without the training runtime.
    bool startLiveRun();
    QAction* trainLiveAction() const { return m_trainLiveAction; }
    /// Run ▸ Remove run: empties `slot` (its timeline, table column, loss curve, check). A running
    /// run is refused (Stop first). Removing the last run goes back to the what-if's predictions.
    bool removeRun(int slot, QString* error = nullptr);
    QAction* removeRunAction() const { return m_removeRunAction; }
    /// Runs the demo without pacing and returns when both runs finished (screenshot mode).
    bool runDemoToEnd(const DemoOptions& options, int timeoutMs = 30'000);
    /// Run ▸ Calibrate: trains the tuning panel's settings for kCalibrationBatches global batches
    /// at two micro-batch sizes (b and 2b) with LibTorch and feeds both runs to their scope's
    /// calibration (RunWorkspace): every prediction (sliders, Suggest, the prediction check) then
    /// says "calibrated from …" with the b-fit and its error. False (and nothing started) in a
    /// build without the training runtime (a replayed simulation measures nothing), when the
    /// pre-flight refuses the settings, or when two slots are not free.
    bool startCalibrationPass();
    static constexpr int kCalibrationBatches = 2;
    void stopRuns();
    /// Apply: sends the tuning panel's schedule, a and b to the running live run, which continues
    /// from its current weights with them from its next global-batch boundary (the timeline marks
    /// the change). Returns the run's answer (refusals name the field; also in the status bar).
    /// The Apply action is enabled only while a live LibTorch run is training.
    Status applyToLiveRun();
    QAction* applyAction() const { return m_applyAction; }
    /// File > Open recent: the run directories opened before (QSettings recent/files, newest first).
    QMenu* recentMenu() const { return m_recentMenu; }
    static QStringList recentFiles();
    /// Opens a run directory (config.toml, trace.json, metrics.jsonl, summary.json) into the first
    /// free slot. False with `error` set when it cannot be read or every slot holds a run (none is
    /// replaced: Run ▸ Remove run makes room).
    bool openRunDirectory(const QString& dir, QString* error);
    /// Continues the run in `dir` from its checkpoint as a live run (main_window_resume.cpp).
    /// False with `error` set when it has no checkpoint or this build cannot train.
    bool resumeRunDirectory(const QString& dir, QString* error);
    /// Run ▸ Balance stages…: opens the per-stage layer editor on the tuning panel's settings
    /// (main_window_balance.cpp); Apply sets its split as the what-if's partition. Returns the dialog.
    BalanceStagesDialog* openBalanceStages();
    /// A folder of torch.profiler rank traces (no config.toml): imported as one job (main_window_kineto.cpp).
    static bool isKinetoJobFolder(const QString& dir);
    bool openKinetoJob(const QString& dir, QString* error);

    TuningPanel* tuning() const { return m_tuning; }
    CompareView* compare() const { return m_compare; }
    PredictionEngine* engine() const { return m_engine; }
    RunController* runs() const { return m_runs; }
    BubbleChartView* bubbleChart() const { return m_bubbles; }
    MemoryChartView* memoryChart() const { return m_memory; }
    LagChartView* lagChart() const { return m_lag; }
    MetricsPanel* metricsPanel() const { return m_metrics; }
    PredictionCheckView* predictionCheck() const { return m_check; }
    /// The measured times the panel's predictions use now (sliders, Suggest): its scope's
    /// (currentScope()), fitted in b from that scope's measured runs (live or opened) with the same
    /// stage count. Null until one has a trace.
    CalibrationPtr calibration() const;
    /// The calibration scope the panel predicts for: the selected run's when it is an imported job
    /// (its own what-if), else the panel's model and device (calibrationScope).
    std::string currentScope() const;
    /// The run the tuning panel, the charts and the config export follow (-1 = none).
    int selectedSlot() const { return m_workspace->selected(); }
    /// The runs shown (slots, selection, calibration); the window only displays them.
    RunWorkspace* workspace() const { return m_workspace; }
    /// Selects the run in `slot`: the tuning panel takes its settings, the charts show it.
    void selectSlot(int slot);
    /// The configuration File ▸ Export writes: the selected run's config.toml (model, data,
    /// optimizer, steps) with the tuning panel's schedule, p, a and b; without a selected run,
    /// the tuning panel's settings over the defaults.
    runtime::RunConfig configToExport() const;
    /// File ▸ Export tuned config without the dialog. False with `error` set.
    bool exportConfigTo(const QString& path, const QString& format, QString* error);
    /// File ▸ Export trace without the dialog: every run shown (the first at `path`, each next
    /// with a "-2", "-3", ... suffix); predictions only when no run is shown. False with `error` set.
    bool exportTracesTo(const QString& path, QString* error);
    /// Writes every panel as PNG and SVG into `dir` (timelines, bubbles, memory, lag, loss, drift,
    /// throughput). False with `error` set on the first failure.
    bool exportPanelsTo(const QString& dir, QString* error);

    /// Shrinks and moves the window onto the available area of its screen (first launch at
    /// 1600×1000 on a smaller screen, a geometry restored from a larger one).
    void fitToScreen();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    /// Puts a finished run read from disk (a run directory or an imported job) into the
    /// workspace's next slot (RunWorkspace::placeOpened), shows it with `slotText` under its title,
    /// selects it so the panel, the charts and the exports follow it, and calibrates from it
    /// (b = `microBatchSize`; `first`: whether its trace starts with its process). `drift`: what a
    /// run directory measured on its tensors; `scope`: its calibration scope (empty: its config's;
    /// an imported job has its own). Returns the slot, -1 when no slot is free.
    int placeOpenedRun(const PredictedRun& run, const runtime::RunConfig& config, const QString& slotText,
        int microBatchSize, runtime::RunDrift drift = {}, runtime::FirstActions first = runtime::FirstActions::StartUp,
        const std::string& scope = {});
    struct QueuedRun
    {
        PredictedRun plan;
        runtime::RunConfig config;
        int slot = -1; ///< reserved in the workspace when queued
    };

    /// Enqueues `runs` (each its own schedule and b) in free slots, one after the other. False,
    /// with nothing stopped or cleared, when fewer slots are free than runs.
    bool startRuns(const std::vector<WhatIfConfig>& runs, const DemoOptions& options);
    /// Gives back the slots of queued runs that will not start now.
    void dropQueuedRuns();
    void buildUi();
    void buildActions();
    void onConfigChanged(const WhatIfConfig& config);
    void onPredicted(const PredictionPtr& prediction);
    void onRunStarted(int run, const QString& label);
    void onRunUpdated(int run, const RunUpdatePtr& update);
    void onLiveIndexBuilt(int slot, const BuiltTimeline& timeline);
    void onRunFinished(int run, const RunUpdatePtr& update);
    void showCharts(const PredictedRun& run, std::int64_t budget);
    void refreshLiveTable();
    void showLoss(int slot, const RunUpdate& update);
    /// The metrics panel shows the slots' loss curves (m_lossCurves, per slot).
    void showLossCurves();
    /// Adds `run`'s measured per-stage times to the calibration of its slot's scope (replacing an
    /// earlier sample of the same run), refits it and re-checks every measured run.
    void calibrateFrom(int slot, const PredictedRun& run, int microBatchSize,
        runtime::FirstActions first = runtime::FirstActions::StartUp);
    /// While a live run trains: recalibrates from its growing trace once per finished global batch.
    void calibrateWhileRunning(int slot, const RunUpdate& update);
    void addCalibrationSample(const std::string& scope, runtime::CostSample sample);
    /// A scope's calibration changed: the panel takes it when it predicts for that scope; the
    /// prediction check re-checks every run against its own scope's.
    void onCalibrationChanged(const std::string& scope, const CalibrationPtr& calibration);
    /// The panel takes the calibration and the time-to-target statistics of currentScope() (without
    /// predicting); true when either changed.
    bool followScope();
    /// The tuning panel refits its model of time to target from the runs now on screen and
    /// re-predicts where it changed and a prediction is shown.
    void refreshStatistics();
    /// The calibrated prediction of each measured run's own settings next to what it measured.
    void refreshChecks();
    /// The prediction of the tuning panel's settings in its own lane, and as a "predicted" column.
    void showPredictionLane(const Prediction& prediction);
    void clearPredictionLane();
    /// Slots switch from predictions to runs: both are cleared first (nothing predicted stays).
    void enterRunMode();
    void openRunDialog();
    void resumeRunDialog();
    void exportConfig();
    void exportTrace();
    void exportPanels();
    void saveSettings() const;
    void restoreSettings();
    static void rememberFile(const QString& path);
    void fillRecentMenu();

    TuningPanel* m_tuning = nullptr;
    CompareView* m_compare = nullptr;
    BubbleChartView* m_bubbles = nullptr;
    MemoryChartView* m_memory = nullptr;
    LagChartView* m_lag = nullptr;
    MetricsPanel* m_metrics = nullptr;
    PredictionCheckView* m_check = nullptr;
    RunWorkspace* m_workspace = nullptr;
    std::optional<ComparisonRow> m_predictedSummary; ///< the prediction lane's column in the table
    bool m_stopping = false; ///< Stop was pressed: runs that end now are labelled stopped
    bool m_calibrating = false; ///< the runs are a calibration pass: say so when they are done
    std::array<std::size_t, RunWorkspace::kSlots> m_calibratedBatches{}; ///< metrics count of the last live calibration
    double m_targetLoss = 0;
    PredictionEngine* m_engine = nullptr;
    RunController* m_runs = nullptr;
    std::array<AsyncIndexBuilder*, RunWorkspace::kSlots>
        m_indexers{}; ///< per slot: live traces indexed off the UI thread
    QAction* m_stopAction = nullptr;
    QAction* m_applyAction = nullptr;
    QAction* m_trainLiveAction = nullptr;
    QAction* m_removeRunAction = nullptr;
    std::vector<int> m_batchSlots; ///< the slots of the runs the last startRuns() queued
    bool m_selectNextStart = false; ///< the first run of a batch is selected when it starts
    QAction* m_bothRunsAction = nullptr;
    QMenu* m_recentMenu = nullptr;
    std::deque<QueuedRun> m_queuedPlans; ///< plans of enqueued runs, in start order
    std::map<int, int> m_runSlot; ///< controller run id -> slot
    bool m_liveMeasured = false;
    std::vector<LossCurve> m_lossCurves; ///< per slot (an empty label: none)
    std::int64_t m_liveBudget = 0;
};

} // namespace bs::ui
