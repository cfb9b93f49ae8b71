#pragma once
// The torch-free facade of a training run (the GUI and the CLI talk to runs through it). Owns the
// model, the data, the trace and the run directory; runs the schedule through the scheduler core
// with the TensorExecutor (or the plain reference trainer). Pimpl: no torch in this header.

#include "base/result.h"
#include "base/time.h"
#include "profiler/analysis/report.h"
#include "profiler/trace/trace_store.h"
#include "runtime/plan/config/run_config.h"
#include "runtime/plan/rundir/run_metrics.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

/// How the schedule is executed. Serial: the scheduler core (drive()) performs every action on
/// the calling thread; the timeline is virtual (per-stage clocks from measured durations).
/// Threaded: driveThreaded(), one thread per stage on real clocks; the numerics are identical
/// (static per-stage orders), the timeline is wall-clock.
enum class ExecutorKind
{
    Serial,
    Threaded
};

class StageTransport; // runtime/train/exec/stage_transport.h

struct SessionOptions
{
    std::optional<std::filesystem::path> outDir; ///< run directory; none = nothing written
    bool overwrite = false; ///< replace an existing run directory's files
    bool reference = false; ///< plain non-pipelined training (--reference)
    /// Threaded: each stage thread uses device.intraOpThreads intra-op threads (1 when 0). Batch
    /// metrics of a runSteps() chunk are recorded when the chunk ends (the stages are still
    /// running when a batch completes); a validation pass due inside a chunk runs once, at its
    /// end, with the weights of that moment, and is reported on the chunk's last batch.
    ExecutorKind executor = ExecutorKind::Serial;
    /// Multi-process (runtime/train/dist): set = this process runs only stage transport->rank() of every
    /// schedule; activations and gradients to and from its neighbours go through the transport;
    /// the trace is on the wall clock, ns since `clockZero` (the rendezvous: all ranks share it);
    /// only the last stage knows the losses (other ranks report NaN); no validation passes (they
    /// need every stage's weights). `executor` is ignored.
    std::shared_ptr<StageTransport> transport;
    std::chrono::steady_clock::time_point clockZero{};
    /// Continue the run in `outDir` from its checkpoint (train --resume; checkpoint_state.h):
    /// the checkpoint's settings with `config`'s training.steps, training.checkpoint_every and
    /// device.intra_op_threads (any other difference is an InvalidArgument naming its section);
    /// metrics.jsonl keeps the records before the checkpoint and is appended to; the trace
    /// continues from the checkpoint's events. Serial or threaded pipelined runs only.
    bool resume = false;
    /// End the run at the global-batch boundary after the validation loss first reaches
    /// training.target_loss (train --stop-at-target): summary.json then holds time_to_target_s and
    /// the batches trained. Serial pipelined runs and the reference trainer only (the threaded
    /// executor validates at a chunk's end, a rank never): create() refuses the others, and a
    /// config without a target loss or validation passes.
    bool stopAtTarget = false;
};

/// What a live Apply takes from the RunConfig it is given (RunSession::requestApply): the schedule
/// and the batch geometry (schedule.name, pipeline.microbatches, pipeline.accum,
/// pipeline.micro_batch_size). The stages, the model and the device are fixed for a run's life:
/// the given config's pipeline.stages, model.preset and device.name must equal the run's (else
/// InvalidArgument naming the field); every other field is the run's. No mirror type: the GUI
/// sends the RunConfig its tuning panel holds.
RunConfig withLiveSettings(const RunConfig& running, const RunConfig& wanted);

/// One Apply as it took effect.
struct AppliedChange
{
    int step = 0; ///< first global batch trained with the new settings
    std::int64_t firstMicrobatch = 0; ///< its first run-wide micro-batch id (trace ids)
    TimeNs time = 0; ///< on the trace's clock: every earlier micro-batch ended by then
    std::string label; ///< "apply: paci m=8 a=4 b=8" (also the trace marker's label)
    RunConfig config; ///< the configuration in force from `step` on
};

/// The analysis segments of the changes applied to a run (profiler::AnalysisOptions::laterSettings):
/// from each change's first micro-batch on, its m and whether its schedule flushes.
std::vector<profiler::AnalysisOptions::Segment> analysisSegments(const std::vector<AppliedChange>& changes);

class RunSession
{
public:
    /// Trains one global batch of `config` in a throwaway session (nothing written or kept), so the
    /// process's one-time costs (allocator growth, intra-op thread start-up, first-call kernel
    /// selection: the first actions in a process run several times slower) are not charged to
    /// the first measured run when runs are compared one after the other.
    static Status warmUp(const RunConfig& config);

    /// Validates `config`, places the stages on their devices (device_plan.h), opens the data,
    /// builds the model and (with outDir) writes config.toml. On a GPU it also starts CUPTI
    /// (kernel lanes; when it cannot, summary().notes says why and the run goes on) and the CUDA
    /// memory attribution. Errors: InvalidArgument (config; device.name when no CUDA device is
    /// present or this LibTorch is CPU-only), IoError/ParseError (data, run directory).
    static Result<RunSession> create(const RunConfig& config, const SessionOptions& options = {});
    RunSession(RunSession&&) noexcept;
    RunSession& operator=(RunSession&&) noexcept;
    ~RunSession();

    /// Trains `count` more global batches as one schedule (asynchronous schedules drain only at
    /// its end, or at a boundary where a requestApply() takes effect: the rest is a new schedule). Blocking; call from
    /// one thread. Cancelled after requestStop(), Diverged on NaN/inf; after any error the session only accepts
    /// finish().
    Status runSteps(int count);
    /// runSteps(training.steps − stepsDone()) then finish().
    Status run();
    /// Writes trace.json and summary.json (when there is a run directory). Idempotent.
    Status finish();

    /// Thread-safe; the running runSteps() returns Cancelled after the current action. A serial
    /// pipelined run with training.checkpoint_every > 0 and a run directory stops at the end of
    /// the global batch in progress instead (the cut of a live Apply: asynchronous schedules drain
    /// there), writes a checkpoint, and returns Cancelled; `train --resume` continues it.
    void requestStop();

    /// Live Apply. Thread-safe; validates `settings` at once exactly as RunConfig validation does
    /// (errors name the field: schedule.name, pipeline.microbatches, pipeline.accum,
    /// pipeline.micro_batch_size; pipeline.stages / model.preset / device.name when they differ
    /// from the run's) and returns; the change takes effect at the next global-batch boundary of
    /// the running runSteps():
    ///   - the boundary is the end of the batch whose micro-batches are being started (the driver
    ///     fixes it between two actions: DriveOptions::cut); no micro-batch of a later batch starts;
    ///   - every micro-batch already started completes its forward and backward on every stage and
    ///     its gradients are applied (the updates covering them run; an update window that
    ///     straddles the boundary would apply its part, which valid configs never have: paci's a
    ///     divides m). Asynchronous schedules (paci, pipedream, 2bw, async-1f1b) thus drain there;
    ///   - the remaining steps continue as a new schedule of the new settings from the current
    ///     weights, AdamW state and versions (the LR schedule continues at the training progress
    ///     reached); step numbers, micro-batch ids and the trace's time axis continue; the data
    ///     continues at the next unread sequence (in micro-batches of the new b).
    /// The trace gets an EventKind::Marker on stage 0 at the boundary time (microbatch = the first
    /// step under the new settings) with its label in the trace metadata attribute
    /// "marker.<step>"; config.toml is rewritten with the settings in force (the trace's markers are
    /// the history). Called while no runSteps() runs, or when the running one has no boundary left,
    /// the change applies when the next runSteps() starts. A later request before the boundary
    /// replaces an earlier one. Only the serial pipelined executor supports it: the threaded
    /// executor, multi-process ranks and the reference trainer answer Unavailable.
    Status requestApply(const RunConfig& wanted);
    /// The changes applied so far, in order. Thread-safe.
    std::vector<AppliedChange> appliedChanges() const;
    /// Metrics of the batches completed since the last call. Thread-safe.
    std::vector<BatchMetrics> pollMetrics();

    int stepsDone() const;
    RunSummary summary() const;
    std::shared_ptr<const profiler::TraceSnapshot> trace() const;
    /// The configuration in force (after any applied change). Read it only from the thread that
    /// calls runSteps() or while none runs.
    const RunConfig& config() const;

private:
    struct Impl;
    explicit RunSession(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace bs::runtime
