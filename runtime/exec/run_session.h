#pragma once
// The torch-free facade of a training run (the GUI and the CLI talk to runs through it). Owns the
// model, the data, the trace and the run directory; runs the schedule through the scheduler core
// with the TensorExecutor (or the plain reference trainer). Pimpl: no torch in this header.

#include "profiler/trace/trace_store.h"
#include "base/result.h"
#include "runtime/config/run_config.h"
#include "runtime/exec/run_metrics.h"

#include <chrono>

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace bs::runtime {

/// How the schedule is executed. Serial: the scheduler core (drive()) performs every action on
/// the calling thread; the timeline is virtual (per-stage clocks from measured durations).
/// Threaded: driveThreaded(), one thread per stage on real clocks; the numerics are identical
/// (static per-stage orders), the timeline is wall-clock.
enum class ExecutorKind { Serial, Threaded };

class StageTransport; // runtime/dist/stage_transport.h

struct SessionOptions
{
    std::optional<std::filesystem::path> outDir; ///< run directory; none = nothing written
    bool overwrite = false;                      ///< replace an existing run directory's files
    bool reference = false;                      ///< plain non-pipelined training (--reference)
    /// Threaded: each stage thread uses device.intraOpThreads intra-op threads (1 when 0). Batch
    /// metrics of a runSteps() chunk are recorded when the chunk ends (the stages are still
    /// running when a batch completes); a validation pass due inside a chunk runs once, at its
    /// end, with the weights of that moment, and is reported on the chunk's last batch.
    ExecutorKind executor = ExecutorKind::Serial;
    /// Multi-process (runtime/dist): set = this process runs only stage transport->rank() of every
    /// schedule; activations and gradients to and from its neighbours go through the transport;
    /// the trace is on the wall clock, ns since `clockZero` (the rendezvous: all ranks share it);
    /// only the last stage knows the losses (other ranks report NaN); no validation passes (they
    /// need every stage's weights). `executor` is ignored.
    std::shared_ptr<StageTransport> transport;
    std::chrono::steady_clock::time_point clockZero{};
};

class RunSession
{
public:
    /// Validates `config`, opens the data, builds the model and (with outDir) writes config.toml.
    /// Errors: InvalidArgument (config), IoError/ParseError (data, run directory), Unavailable
    /// (a CUDA device with this CPU-only LibTorch).
    static Result<RunSession> create(const RunConfig& config, const SessionOptions& options = {});
    RunSession(RunSession&&) noexcept;
    RunSession& operator=(RunSession&&) noexcept;
    ~RunSession();

    /// Trains `count` more global batches as one schedule (asynchronous schedules drain only at
    /// its end). Blocking; call from one thread. Cancelled after requestStop(), Diverged on
    /// NaN/inf; after any error the session only accepts finish().
    Status runSteps(int count);
    /// runSteps(training.steps − stepsDone()) then finish().
    Status run();
    /// Writes trace.json and summary.json (when there is a run directory). Idempotent.
    Status finish();

    /// Thread-safe; the running runSteps() returns Cancelled after the current action.
    void requestStop();
    /// Metrics of the batches completed since the last call. Thread-safe.
    std::vector<BatchMetrics> pollMetrics();

    int stepsDone() const;
    RunSummary summary() const;
    std::shared_ptr<const profiler::TraceSnapshot> trace() const;
    const RunConfig& config() const;

private:
    struct Impl;
    explicit RunSession(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace bs::runtime
