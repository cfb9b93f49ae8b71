#pragma once
// The runs the window shows, without the window: the compare slots (a live or replayed run, an
// opened run directory, an imported job), which one is selected, and the calibrations fitted from
// the measured runs: one per scope (a model shape on a device), so a run of another model never
// changes the predictions of this one. MainWindow lays out the widgets and routes actions; what a slot holds,
// which slot the next run goes to and which runs the predictions are calibrated from live here.
// A run stays in its slot until the user removes it (issue 30): a new run takes a free slot, and
// where none is free it is refused, never put in another run's place.

#include "profiler/analysis/report.h"
#include "runtime/plan/common/stage_drift.h"
#include "runtime/plan/config/run_config.h"
#include "runtime/plan/sim/cost_fit.h"
#include "runtime/plan/sim/goodput_runs.h"
#include "ui/bridge/run_backend.h"
#include "ui/tuning/calibration.h"
#include "ui/tuning/what_if.h"

#include <QObject>

#include <array>
#include <map>
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
    /// The calibration it feeds and is checked against (calibrationScope(config), or an imported
    /// job's own): runs of one model shape on one device.
    std::string scope;
    /// An opened run directory's weight drift as its summary measured it (empty: none, or a live
    /// run, whose drift comes from its latest metrics: measuredDrift()).
    runtime::RunDrift openedDrift;
    /// The run directory it was opened from ("" for live, replayed and imported runs) and its
    /// per-batch metrics (a live run's are latest->metrics): their noise scale and validation
    /// losses are what the what-if and Suggest predict time to target from (statisticsRuns()).
    std::string directory;
    std::shared_ptr<const std::vector<runtime::BatchMetrics>> openedMetrics;

    bool finished() const { return latest && latest->finished; }
    /// The drift the comparison table shows: what the run measured on its tensors, per model stage
    /// (its latest batch's StageMetrics, or the opened run's summary); not measured for a replay.
    runtime::RunDrift measuredDrift() const;
};

/// A finished measured run read from disk (a run directory, an imported job): `trace` analysed once
/// with `options`, its lag bound and its timeline index. The one place opened runs are built.
PredictedRun measuredRun(std::string label, runtime::Schedule schedule,
    std::shared_ptr<const profiler::TraceSnapshot> trace, const profiler::AnalysisOptions& options);

/// The calibration scope of runs of `config`: its model's shape and the device it trains on. A
/// calibration applies to the runs of one scope only.
std::string calibrationScope(const runtime::RunConfig& config);

class RunWorkspace : public QObject
{
    Q_OBJECT
public:
    static constexpr int kSlots = 4;
    using Slots = std::array<std::optional<RunSlot>, kSlots>;

    explicit RunWorkspace(QObject* parent = nullptr);

    /// False while the slots show the predictions of the tuning panel (no run yet).
    bool showsRuns() const { return m_showsRuns; }
    /// The slots switch from predictions to runs: emptied, none selected. Runs already shown stay.
    void enterRunMode();
    /// Back to predictions once the last run was removed (and none is about to start).
    void leaveRunMode();

    Slots& slots() { return m_slots; }
    const Slots& slots() const { return m_slots; }
    std::optional<RunSlot>& slot(int slot) { return m_slots[static_cast<std::size_t>(slot)]; }
    const std::optional<RunSlot>& slot(int slot) const { return m_slots[static_cast<std::size_t>(slot)]; }

    /// Slots neither holding a run nor reserved for one about to start.
    int freeSlots() const;
    /// Puts a finished measured run read from disk into the first free slot and returns it; -1
    /// when every slot holds a run (nothing is replaced). Enters run mode first when the slots
    /// showed predictions.
    int placeOpened(const PredictedRun& run, const runtime::RunConfig& config, runtime::RunDrift drift = {});
    /// Holds the first free slot for a run that is queued to start (-1 when none is free).
    int reserve();
    /// Gives back a reserved slot whose run never started.
    void release(int slot);
    /// A live (or replayed) run started in the slot reserve() gave it, without a result yet.
    void placeStarted(int slot, const PredictedRun& plan, const runtime::RunConfig& config, bool measured);
    /// Empties `slot` (Run ▸ Remove run); the selection is cleared when it was there.
    void remove(int slot);
    /// True when no slot holds a run or is reserved.
    bool empty() const;

    /// The run the tuning panel, the charts and the exports follow (-1 = none).
    int selected() const { return m_selected; }
    /// Selects `slot` when it holds a run; false otherwise (the selection stays).
    bool select(int slot);
    void clearSelection() { m_selected = -1; }

    /// The measured runs of `scope` (calibrationScope: one model on one device), live ones
    /// included, with their per-batch metrics, for runtime::goodputFromRuns(). No copies: each
    /// shares the metrics its slot holds.
    std::vector<runtime::StatisticsRun> statisticsRuns(const std::string& scope) const;

    /// The calibration of `scope` (null until a measured run of it has a trace).
    CalibrationPtr calibrationFor(const std::string& scope) const;
    /// The calibration last refitted (any scope; null before any).
    CalibrationPtr calibration() const { return calibrationFor(m_lastScope); }
    /// Adds a measured run's per-stage times to `scope`'s calibration (replacing an earlier sample
    /// of the same run; a run at another stage count replaces them all: a per-stage fit cannot mix
    /// stage counts) and refits it. Other scopes are untouched. Emits calibrationChanged on success.
    Result<CalibrationPtr> addCalibrationSample(const std::string& scope, runtime::CostSample sample);

Q_SIGNALS:
    void calibrationChanged(const std::string& scope, const bs::ui::CalibrationPtr& calibration);

private:
    /// Holds no run and is not reserved for one that is starting.
    bool isFree(int slot) const { return !this->slot(slot) && !m_reserved[static_cast<std::size_t>(slot)]; }
    /// The first free slot; -1 when there is none.
    int firstFree() const;
    Slots m_slots;
    bool m_showsRuns = false;
    int m_selected = -1;
    std::array<bool, kSlots> m_reserved{};
    struct Scoped
    {
        CalibrationPtr calibration;
        std::vector<runtime::CostSample> samples; ///< every measured run it is fitted on
    };
    std::map<std::string, Scoped> m_scopes;
    std::string m_lastScope;
};

} // namespace bs::ui
