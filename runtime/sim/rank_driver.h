#pragma once
// The rank driver: one process runs one stage's static program, in order, on its own clock, and
// meets its neighbours only through the links it is given (runtime/exec wires them to a
// StageTransport). It records actions like the other two drivers (actionEvent, atAction), so the
// three differ only in how they wait for inputs and where time comes from; with static per-stage
// orders the numerics are the serial driver's.

#include "runtime/sim/scheduler_core.h"

#include <functional>

namespace bs::runtime {

struct RankLinks
{
    /// Before `action`: bring in the tensor it needs from `fromStage` (blocking; errors name the peer).
    std::function<Status(const Action& action, int fromStage)> receive;
    /// After `action`: start sending what it produced to `toStage`.
    std::function<Status(const Action& action, int toStage)> send;
    /// The rank's clock: ns since a zero every rank shares (the rendezvous).
    std::function<TimeNs()> now;
    /// After each recorded action (batch bookkeeping); an error ends the run with it. May be empty.
    std::function<Status(const Action& action, const profiler::TraceEvent& event)> recorded;
};

/// Runs `stage`'s program of `schedule` through `executor`. Honours options.stop (between two
/// actions), options.initialVersions (this stage's entry) and options.microbatchOffset; the events
/// are on links.now() (options.timeOrigin is not used). DriveStats::makespan is the end of the
/// last action on that clock; finalVersions has this stage's entry set (others as given, or 0).
/// The first error (executor, link, stop: Cancelled) is returned with the stage and action named;
/// the events recorded before it stay in the store.
Result<DriveStats> driveRank(const Schedule& schedule, int stage, ActionExecutor& executor, profiler::TraceStore& store,
                             const DriveOptions& options, const RankLinks& links);

} // namespace bs::runtime
