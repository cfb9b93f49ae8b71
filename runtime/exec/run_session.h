#pragma once
// The torch-free facade of a training run (the GUI and the CLI talk to runs through it). Owns the
// model, the data, the trace and the run directory; runs the schedule through the scheduler core
// with the TensorExecutor (or the plain reference trainer). Pimpl: no torch in this header.

#include "profiler/trace/trace_store.h"
#include "runtime/common/result.h"
#include "runtime/config/run_config.h"
#include "runtime/exec/run_metrics.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace bs::runtime {

struct SessionOptions
{
    std::optional<std::filesystem::path> outDir; ///< run directory; none = nothing written
    bool overwrite = false;                      ///< replace an existing run directory's files
    bool reference = false;                      ///< plain non-pipelined training (--reference)
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
