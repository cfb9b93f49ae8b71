#pragma once
// A "run source" the UI can watch: a simulation replayed in virtual time (SimulatedBackend) or a
// live LibTorch RunSession (RunSessionBackend, when the runtime is built). Pure C++ (no Qt, no torch), so any backend can be written
// and tested without the UI. RunController drives one on its worker thread.

#include "base/result.h"
#include "profiler/analysis/report.h"
#include "profiler/trace/trace_store.h"
#include "runtime/plan/config/run_config.h"
#include "runtime/plan/rundir/run_metrics.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bs::ui {

// A run's training metrics on screen are the runtime's own records: runtime::BatchMetrics per
// global batch (what metrics.jsonl holds per line), each with its runtime::StageMetrics per stage.
// No UI copy of their fields.

/// `batch` as the charts plot it (a live run's or a loaded run directory's, the same filter):
/// nullopt when its training loss is not finite (a rank without the last stage), a validation
/// loss that is not finite dropped.
std::optional<runtime::BatchMetrics> plottableBatch(const runtime::BatchMetrics& batch);

/// What a run has produced so far. Immutable once published; shared with the UI thread.
struct RunUpdate
{
    std::string label; ///< "paci a=8 (simulated)"
    std::shared_ptr<const profiler::TraceSnapshot> trace; ///< everything recorded so far
    std::vector<runtime::BatchMetrics> metrics; ///< the batches plottableBatch() kept
    std::optional<profiler::Report> report; ///< set when the backend can analyse (at least at the end)
    double progress = 0; ///< 0..1 where known
    bool finished = false;
    /// Settings applied during the run (Apply), for attributing its bubbles per setting.
    std::vector<profiler::AnalysisOptions::Segment> laterSettings;
    /// The same Applies with the whole configuration in force from each one's first global batch
    /// on (its batch m·b counts that batch's samples: samplesTrained()).
    struct AppliedSettings
    {
        int step = 0; ///< first global batch trained with `config`
        runtime::RunConfig config;
    };
    std::vector<AppliedSettings> applied;
};

/// The sequences a run trained in `steps` global batches: each batch at the m·b in force then
/// (`first`'s until the first Apply, each Apply's from its step on).
double samplesTrained(
    const runtime::RunConfig& first, const std::vector<RunUpdate::AppliedSettings>& applied, int steps);
using RunUpdatePtr = std::shared_ptr<const RunUpdate>;

/// Handed to RunBackend::run(): how a backend reports and learns it must stop.
class RunContext
{
public:
    virtual ~RunContext() = default;
    /// True once stop was requested; backends check it between actions and return promptly
    /// (Stop must end a run within a second), keeping what was recorded.
    virtual bool stopRequested() const = 0;
    /// Publishes progress; cheap, may be called often (the controller throttles). Thread: worker.
    virtual void publish(RunUpdatePtr update) = 0;
};

class RunBackend
{
public:
    virtual ~RunBackend() = default;
    virtual std::string label() const = 0;
    /// Runs to the end or until ctx.stopRequested(); blocking; called on the controller's worker
    /// thread, never on the UI thread. Must publish a final update with finished = true before
    /// returning successfully. Returns ErrorCode::Cancelled when stopped (recorded data kept).
    /// Must not throw.
    virtual Status run(RunContext& ctx) = 0;
    /// Optional live Apply: asks the running run() to continue with `request` from its next
    /// global-batch boundary (the trace marks the change). Thread-safe: called from the UI thread
    /// while run() runs on the worker. Returns at once with the validation result. Default:
    /// Unavailable (a backend that replays a fixed run cannot change it).
    /// `wanted` is the tuning panel's RunConfig: the runtime takes its schedule and batch geometry
    /// and refuses (naming the field) a stages, model or device that differs from the run's
    /// (runtime::withLiveSettings, run_session.h). No mirror type of the settings.
    virtual Status apply(const runtime::RunConfig& wanted)
    {
        (void)wanted;
        return makeError(ErrorCode::Unavailable, label() + " cannot change its settings while running");
    }
};

} // namespace bs::ui
