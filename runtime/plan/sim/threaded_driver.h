#pragma once
// The threaded driver: one worker thread per rank, each running its rank's static program (all
// of its stages, interleaved as the schedule orders them) on real clocks. Because every rank's
// order is fixed by the schedule, the numerics are those of the serial driver (drive()); only the
// timing is real. Used for training on several devices (or cores) in one process.

#include "runtime/plan/sim/scheduler_core.h"

#include <chrono>

namespace bs::runtime {

struct ThreadedOptions
{
    /// How long a stage may wait for an input before the run fails with a message naming it.
    std::chrono::milliseconds inputTimeout{std::chrono::minutes(10)};
};

/// Runs `schedule` with one thread per rank. `executor.perform()` is called concurrently for
/// different ranks (never for two stages of one rank, nor the same stage twice, at once), so it
/// must keep per-stage state apart. An overlapped F&B pair is one perform() call, recorded as its
/// two halves (as drive() does); tensors between two stages of one rank arrive when produced. Events carry wall-clock
/// times (ns since the call began, plus options.timeOrigin). `options.onAction` is called under a lock, one call at a
/// time, from the worker threads. Stop (options.stop) is honoured between actions within ~10 ms; the first stage error
/// stops every stage and is returned with the stage and action named. Never leaves a thread behind.
Result<DriveStats> driveThreaded(const Schedule& schedule, ActionExecutor& executor, profiler::TraceStore& store,
    const DriveOptions& options = {}, const ThreadedOptions& threaded = {});

} // namespace bs::runtime
