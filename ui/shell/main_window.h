#pragma once
// The application window: tuning controls on the left, two runs side by side on one time axis
// with the comparison table, and the per-stage charts underneath. A run slot shows either a live
// run (RunController over a simulated backend, or a RunSession when the LibTorch runtime is built),
// an opened run directory or imported job, or the prediction for the current what-if settings.

#include "ui/bridge/run_controller.h"
#include "ui/charts/loss_chart.h"
#include "ui/tuning/calibration.h"
#include "ui/tuning/prediction_engine.h"

#include <QMainWindow>

#include <array>
#include <deque>
#include <map>
#include <optional>

namespace bs::ui {

class AsyncIndexBuilder;
struct BuiltTimeline;
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

/// True when this build can train live (the runtime's RunSession is linked in).
bool liveTrainingAvailable();

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    /// `restoreSettings` = false gives the default layout (screenshots, tests).
    explicit MainWindow(bool restoreSettings = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Plays the demo: 8-stage tiny GPT, PACI (a=8), then 1F1B-flush, live (one after the other).
    void startDemo(const DemoOptions& options);
    /// Runs the demo without pacing and returns when both runs finished (screenshot mode).
    bool runDemoToEnd(const DemoOptions& options, int timeoutMs = 30'000);
    void stopRuns();
    /// Apply: sends the tuning panel's schedule, a and b to the running live run, which continues
    /// from its current weights with them from its next global-batch boundary (the timeline marks
    /// the change). Returns the run's answer (refusals name the field; also in the status bar).
    /// The Apply action is enabled only while a live LibTorch run is training.
    Status applyToLiveRun();
    QAction* applyAction() const { return m_applyAction; }
    /// Opens a run directory (config.toml, trace.json, metrics.jsonl, summary.json) into the next
    /// slot (alternating top/bottom). False with `error` set when it cannot be read.
    bool openRunDirectory(const QString& dir, QString* error);
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
    /// The measured times slider predictions use (null until a live or opened run has a trace).
    CalibrationPtr calibration() const { return m_calibration; }
    /// Writes every panel as PNG and SVG into `dir` (timelines, bubbles, memory, lag, loss, drift,
    /// throughput). False with `error` set on the first failure.
    bool exportPanelsTo(const QString& dir, QString* error);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    enum class Mode
    {
        Prediction,
        Live
    };
    struct LiveRun
    {
        PredictedRun plan; ///< the simulated run (replayed, or the prediction next to a live run)
        RunUpdatePtr latest;
        bool measured = false; ///< a live training run: figures come from its own trace
        bool indexing = false; ///< while running: its growing trace is indexed off the UI thread
    };

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
    /// Calibrates the sliders from `run`'s measured trace and checks the calibrated prediction of
    /// its own settings against what it measured (the "Prediction vs measured" tab).
    void calibrateFrom(int slot, const PredictedRun& run, int microBatchSize);
    /// While a live run trains: recalibrates the sliders from its growing trace once per finished
    /// global batch (no prediction check until the run ends).
    void calibrateWhileRunning(int slot, const RunUpdate& update);
    void openRunDialog();
    void exportConfig();
    void exportTrace();
    void exportPanels();
    void saveSettings() const;
    void restoreSettings();
    static void rememberFile(const QString& path);

    TuningPanel* m_tuning = nullptr;
    CompareView* m_compare = nullptr;
    BubbleChartView* m_bubbles = nullptr;
    MemoryChartView* m_memory = nullptr;
    LagChartView* m_lag = nullptr;
    MetricsPanel* m_metrics = nullptr;
    PredictionCheckView* m_check = nullptr;
    CalibrationPtr m_calibration;
    std::array<std::optional<PredictionCheck>, 2> m_checks;
    std::array<std::size_t, 2> m_calibratedBatches{}; ///< metrics count of the last live calibration
    double m_targetLoss = 0;
    PredictionEngine* m_engine = nullptr;
    RunController* m_runs = nullptr;
    std::array<AsyncIndexBuilder*, 2> m_indexers{}; ///< per slot: live traces indexed off the UI thread
    QAction* m_stopAction = nullptr;
    QAction* m_applyAction = nullptr;
    Mode m_mode = Mode::Prediction;
    std::array<std::optional<LiveRun>, 2> m_live;
    std::deque<PredictedRun> m_queuedPlans; ///< plans of enqueued runs, in start order
    std::map<int, int> m_runSlot; ///< controller run id -> slot
    int m_liveStarted = 0;
    int m_opened = 0;
    bool m_liveMeasured = false;
    std::vector<LossCurve> m_lossCurves;
    std::int64_t m_liveBudget = 0;
};

} // namespace bs::ui
