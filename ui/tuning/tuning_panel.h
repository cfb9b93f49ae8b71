#pragma once
// The what-if controls: schedule, baseline, stages, model preset, device, sliders for the
// accumulation window a and the micro-batch size b (global batch shown), batches simulated,
// memory budget per stage; the predicted figures; and Suggest (runtime::tune) with one-click apply.

#include "runtime/plan/sim/goodput_runs.h"
#include "runtime/plan/sim/run_preflight.h"
#include "runtime/plan/sim/tuner.h"
#include "ui/tuning/what_if.h"

#include <QFutureWatcher>
#include <QWidget>

#include <functional>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QTableWidget;
class QFormLayout;

namespace bs::runtime {
struct ScheduleInfo;
}

namespace bs::ui {

/// The fewest m >= `m` the schedule's rules take at p ranks: where an a = m schedule's a lands.
int fewestAcceptedFrom(const runtime::ScheduleInfo& info, int p, int m);

class TuningPanel : public QWidget
{
    Q_OBJECT
public:
    explicit TuningPanel(QWidget* parent = nullptr);
    ~TuningPanel() override;

    WhatIfConfig config() const;
    /// Sets every control without emitting configChanged.
    void setConfig(const WhatIfConfig& config);
    /// Shows the figures of a prediction next to the controls ("Predicted: …").
    void showPrediction(const Prediction& prediction, double latencyMs);
    /// Shows the figures of a finished run in a slot: "Measured: …" for one that trained (live or
    /// opened), "Simulated: …" for a simulated replay, which is never labelled measured.
    void showRunFigures(const Prediction& figures, bool measured);
    QString figuresTitle() const;
    void showError(const QString& message);
    /// Clears the figures (a run started: nothing shown belongs to it yet).
    void clearFigures(const QString& why);
    /// The measured times every prediction of this panel uses: the sliders' (config()) and
    /// Suggest's (the window gives the one of the model and device shown). Null = the device
    /// profile. Does not emit configChanged; re-runs Suggest when it has run (its table follows
    /// every recalibration) and shows the fit-error warnings.
    void setCalibration(const CalibrationPtr& calibration);
    CalibrationPtr calibration() const { return m_calibration; }
    /// "calibrated from run X (…)" or "device profile cpu": what the predictions are based on.
    QString sourceText() const;

    QSlider* accumSlider() const { return m_accum; }
    QSlider* microBatchSlider() const { return m_microBatch; }
    QComboBox* scheduleBox() const { return m_schedule; }
    QCheckBox* recomputeBox() const { return m_recompute; }
    /// v: stages (model chunks) per rank. Its range is the schedule's (catalogue traits
    /// defaultStagesPerRank..maxStagesPerRank); disabled where the schedule allows one value.
    QSpinBox* stagesPerRankSpin() const { return m_stagesPerRank; }
    /// The schedule's placement in words ("loop: stage i on rank i mod p").
    QLabel* placementLabel() const { return m_placement; }
    /// The note under the a slider naming the schedule's rules on m (catalogue traits: "a multiple
    /// of p = 4", "at least 2·p = 8"); hidden for schedules without any.
    QLabel* accumRuleLabel() const { return m_accumRule; }
    QTableWidget* suggestions() const { return m_suggestions; }
    /// Suggest's table columns: a, b, predicted steady throughput, statistical efficiency,
    /// staleness factor, predicted time to target ± one standard deviation, peak memory, lag.
    enum SuggestColumn : int
    {
        kColAccum,
        kColMicroBatch,
        kColThroughput,
        kColEfficiency,
        kColStaleness,
        kColTimeToTarget,
        kColMemory,
        kColLag,
        kSuggestColumns
    };
    /// The measured runs of the model shown (live and opened), read by refreshStatistics(): where
    /// their metrics record a noise scale, the what-if leads with the predicted time to target and
    /// Suggest ranks by it (runtime::goodputFromRuns, runtime::defaultObjective); with none that
    /// does, Suggest ranks by steady throughput and says why.
    using StatisticsRuns = std::function<std::vector<runtime::StatisticsRun>()>;
    void setStatisticsRuns(StatisticsRuns runs);
    /// Refits the model of time to target from the statistics runs and the target loss (the
    /// window calls it when a run opens, finishes or goes; Suggest and the target loss do too).
    /// True when the model changed: config() then carries the new one. Emits nothing.
    bool refreshStatistics();
    /// The model config() carries (null: no run measured a noise scale; statisticsNote() says why).
    const std::shared_ptr<const runtime::GoodputModel>& goodput() const { return m_goodput; }
    QString statisticsNote() const { return m_goodputWhy; }
    /// What Suggest ranks by in the table shown (or the search running).
    runtime::TuneObjective suggestObjective() const { return m_suggestObjective; }
    /// Suggest's search at `config` (the panel's settings, its calibration, max drift, target
    /// loss, statistics runs): the one request the table and a re-check of a row both use.
    /// Without a model of time to target, `why` (when given) says what is missing.
    runtime::TuneRequest suggestRequest(
        const WhatIfConfig& config, runtime::GptScenario scenario, QString* why = nullptr) const;
    /// Starts the search (also what the Suggest button does); results fill suggestions().
    void suggest();
    bool isSearching() const;

    /// The one pre-flight (runtime::preflightStart) of the panel's settings as a run would start
    /// them (toRunConfig, this machine's memory): what the runtime would refuse, or nullopt. Kept
    /// up to date on every change; the reason is shown beside the control of the field it names.
    const std::optional<Error>& refusal() const { return m_refusal; }
    /// The pre-flight of `config` (Train live, Suggest's rows).
    Status preflight(const WhatIfConfig& config) const;
    /// The refusal's note and the control it stands beside (null when nothing is refused).
    QLabel* refusalLabel() const;
    QWidget* refusedControl() const;
    /// The warnings shown where the numbers are when the calibration's fit error on its own runs
    /// exceeds kHonestFitError: under the predicted figures and above Suggest's table, each with a
    /// Calibrate button (calibrateRequested).
    QWidget* fitWarning() const { return m_fitWarning; }
    QWidget* suggestFitWarning() const { return m_suggestFitWarning; }
    static constexpr double kHonestFitError = 0.15;

Q_SIGNALS:
    /// Any control changed (emitted on every slider step; the engine debounces).
    void configChanged(const bs::ui::WhatIfConfig& config);
    /// The search finished (with or without candidates).
    void suggestionsReady();
    /// A Calibrate button beside a fit-error warning was pressed.
    void calibrateRequested();

private:
    void showFigures(const Prediction& prediction, const QString& title, const QString& note, bool measured = false);
    void emitChanged();
    void updateBatchLabel();
    /// The v spin box follows the chosen schedule's traits (range, enabled, placement text).
    void updateStagesPerRank();
    /// The a slider takes only what the schedule accepts at p: any window where it takes one (m
    /// follows, the note says which), else a = m among the m its rules allow (snapped in the
    /// direction it moved). Updates the note.
    void constrainAccum();
    void applySuggestion(int row);
    /// The panel's settings at a Suggest row's a (= m) and b: what applying the row sets.
    WhatIfConfig suggestionConfig(int accum, int microBatchSize) const;
    void suggestionsFinished();
    QWidget* buildControls();
    QWidget* buildFigures();
    QWidget* buildSuggest();
    /// The refusal notes, one hidden row under each control a field can name (tuning_panel_checks.cpp).
    void buildRefusalRows(QFormLayout* form);
    void updateRefusal();
    /// A warning row (text and a Calibrate button) for `parent`'s box.
    QWidget* makeFitWarning(QWidget* parent);
    void updateFitWarnings();

    WhatIfConfig m_base; // the last setConfig(): what config() puts the controls' values on
    QComboBox* m_schedule = nullptr;
    QComboBox* m_baseline = nullptr;
    QSpinBox* m_stages = nullptr;
    QSpinBox* m_stagesPerRank = nullptr;
    QLabel* m_placement = nullptr;
    QComboBox* m_model = nullptr;
    QComboBox* m_device = nullptr;
    QComboBox* m_runDevice = nullptr; // what this machine has: cpu, cuda:N (probed at start)
    QSlider* m_accum = nullptr;
    QLabel* m_accumValue = nullptr;
    QLabel* m_accumRule = nullptr;
    int m_lastAccum = 0; // the slider's previous value: which way a snap goes
    QSlider* m_microBatch = nullptr;
    QLabel* m_microBatchValue = nullptr;
    QLabel* m_globalBatch = nullptr;
    QSpinBox* m_batches = nullptr;
    QDoubleSpinBox* m_budget = nullptr;
    QCheckBox* m_recompute = nullptr; // model.recompute: the extra forward and the smaller activations
    QLabel* m_figures = nullptr;
    QGroupBox* m_figuresBox = nullptr;
    QLabel* m_source = nullptr;
    CalibrationPtr m_calibration;
    QSpinBox* m_maxLag = nullptr;
    QDoubleSpinBox* m_targetLoss = nullptr; ///< its minimum reads "none": relative time to target
    StatisticsRuns m_statisticsRuns;
    std::shared_ptr<const runtime::GoodputModel> m_goodput; ///< refreshStatistics()
    QString m_goodputWhy; ///< why there is no model
    runtime::TuneObjective m_suggestObjective = runtime::TuneObjective::Throughput;
    QString m_suggestModel; ///< GoodputModel::describe() of the running search, or why none
    bool m_suggestSeconds = false; ///< the model has E_min: times in seconds, else relative
    QPushButton* m_suggestButton = nullptr;
    QTableWidget* m_suggestions = nullptr;
    QLabel* m_suggestStatus = nullptr;
    QString m_suggestSource; ///< sourceText() when the running search started
    QFutureWatcher<Result<runtime::TuneResult>>* m_search = nullptr;
    bool m_silent = false;
    runtime::MemoryCapacity m_capacity; ///< probed once: where a run would start
    std::optional<Error> m_refusal;
    std::vector<std::pair<QWidget*, QLabel*>> m_refusalRows; ///< control, its note
    QWidget* m_fitWarning = nullptr;
    QWidget* m_suggestFitWarning = nullptr;
    bool m_suggested = false; ///< Suggest ran once: a recalibration re-runs it
    bool m_suggestAgain = false; ///< a recalibration arrived while it searched
};

} // namespace bs::ui
