#pragma once
// The rank driver: one process runs one rank's static program (one stage, or the v stages of an
// interleaved or V placement), in order, on its own clock, and meets its neighbours on other
// ranks only through the links it is given (runtime/train/exec wires them to a
// StageTransport). It records actions like the other two drivers (actionEvent, atAction), so the
// three differ only in how they wait for inputs and where time comes from; with static per-stage
// orders the numerics are the serial driver's.

#include "runtime/plan/sim/scheduler_core.h"

#include <functional>

namespace bs::runtime {

struct RankLinks
{
    /// Before plain `action` (an overlapped pair's halves one by one): bring in the tensor it needs
    /// from `fromStage`, a stage on another rank (blocking; errors name the peer).
    std::function<Status(const Action& action, int fromStage)> receive;
    /// After plain `action`: start sending what it produced to `toStage`, a stage on another rank.
    std::function<Status(const Action& action, int toStage)> send;
    /// The rank's clock: ns since a zero every rank shares (the rendezvous).
    std::function<TimeNs()> now;
    /// After each recorded action (batch bookkeeping); an error ends the run with it. May be empty.
    std::function<Status(const Action& action, const profiler::TraceEvent& event)> recorded;
};

/// Runs `rank`'s program of `schedule` through `executor`. Honours options.stop (between two
/// actions), options.initialVersions (this rank's stages' entries) and options.microbatchOffset;
/// the events are on links.now() (options.timeOrigin is not used), on the rank's lane with the
/// chunk in aux for multi-stage ranks (placeOnRank). An overlapped F&B pair is one perform() call,
/// recorded as its two halves. DriveStats::makespan is the end of the last action on that clock;
/// finalVersions has this rank's stages' entries set (others as given, or 0).
/// The first error (executor, link, stop: Cancelled) is returned with the stage and action named;
/// the events recorded before it stay in the store.
Result<DriveStats> driveRank(const Schedule& schedule, int rank, ActionExecutor& executor, profiler::TraceStore& store,
    const DriveOptions& options, const RankLinks& links);

} // namespace bs::runtime
