#pragma once
// The runs the window shows, without the window: the two compare slots (a live or replayed run, an
// opened run directory, an imported job), which one is selected, and the one calibration fitted
// from every measured run. MainWindow lays out the widgets and routes actions; what a slot holds,
// which slot the next run goes to and which runs the predictions are calibrated from live here.

#include "profiler/analysis/report.h"
#include "runtime/plan/common/stage_drift.h"
#include "runtime/plan/config/run_config.h"
#include "runtime/plan/sim/cost_fit.h"
#include "ui/bridge/run_backend.h"
#include "ui/tuning/calibration.h"
#include "ui/tuning/what_if.h"

#include <QObject>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace bs::ui {

/// One run in a compare slot.
struct RunSlot
{
    PredictedRun plan; ///< the simulated run (replayed, or the prediction next to a live run); measured once finished
    RunUpdatePtr latest;
    bool measured = false; ///< a live training run or an opened run: figures come from its own trace
    bool indexing = false; ///< while running: its growing trace is indexed off the UI thread
    runtime::RunConfig config; ///< the settings it ran with (selection, export, the prediction check)
    std::string applied; ///< label of the settings a live Apply switched it to ("" = none)
    /// An opened run directory's weight drift as its summary measured it (empty: none, or a live
    /// run, whose drift comes from its latest metrics: measuredDrift()).
    runtime::RunDrift openedDrift;

    bool finished() const { return latest && latest->finished; }
    /// The drift the comparison table shows: what the run measured on its tensors, per model stage
    /// (its latest batch's StageMetrics, or the opened run's summary); not measured for a replay.
    runtime::RunDrift measuredDrift() const;
};

/// A finished measured run read from disk (a run directory, an imported job): `trace` analysed once
/// with `options`, its lag bound and its timeline index. The one place opened runs are built.
PredictedRun measuredRun(std::string label, runtime::Schedule schedule,
    std::shared_ptr<const profiler::TraceSnapshot> trace, const profiler::AnalysisOptions& options);

class RunWorkspace : public QObject
{
    Q_OBJECT
public:
    static constexpr int kSlots = 2;
    using Slots = std::array<std::optional<RunSlot>, kSlots>;

    explicit RunWorkspace(QObject* parent = nullptr);

    /// False while the slots show the predictions of the tuning panel (no run yet).
    bool showsRuns() const { return m_showsRuns; }
    /// The slots switch from predictions (or earlier runs) to runs: both emptied, none selected.
    void enterRunMode();

    Slots& slots() { return m_slots; }
    const Slots& slots() const { return m_slots; }
    std::optional<RunSlot>& slot(int slot) { return m_slots[static_cast<std::size_t>(slot)]; }
    const std::optional<RunSlot>& slot(int slot) const { return m_slots[static_cast<std::size_t>(slot)]; }

    /// Puts a finished measured run read from disk into the next slot (alternating top/bottom)
    /// and returns the slot. Enters run mode first when the slots showed predictions.
    int placeOpened(const PredictedRun& run, const runtime::RunConfig& config, runtime::RunDrift drift = {});
    /// A live (or replayed) run started: the next slot (alternating), without a result yet.
    int placeStarted(const PredictedRun& plan, const runtime::RunConfig& config, bool measured);

    /// The run the tuning panel, the charts and the exports follow (-1 = none).
    int selected() const { return m_selected; }
    /// Selects `slot` when it holds a run; false otherwise (the selection stays).
    bool select(int slot);
    void clearSelection() { m_selected = -1; }

    /// The one calibration every prediction uses (null until a measured run has a trace).
    CalibrationPtr calibration() const { return m_calibration; }
    /// Adds a measured run's per-stage times (replacing an earlier sample of the same run; a run at
    /// another stage count replaces them all: a per-stage fit cannot mix stage counts) and refits.
    /// Emits calibrationChanged on success.
    Result<CalibrationPtr> addCalibrationSample(runtime::CostSample sample);

Q_SIGNALS:
    void calibrationChanged(const bs::ui::CalibrationPtr& calibration);

private:
    Slots m_slots;
    bool m_showsRuns = false;
    int m_selected = -1;
    int m_opened = 0;
    int m_started = 0;
    CalibrationPtr m_calibration;
    std::vector<runtime::CostSample> m_samples; ///< every measured run the calibration is fitted on
};

} // namespace bs::ui
