#pragma once
// The virtual-time event loop that executes a schedule. One loop serves simulation and training:
// a timeline from `simulate` and one from `train` differ only in where durations come from.
//
// Each stage keeps its own clock. An action starts at max(stage clock, arrival of its input),
// where arrival = producer's end + comm time. The loop repeatedly picks, among the stages whose
// next action has its inputs, the one that would start earliest (ties: lowest stage), performs
// it, and records it. On one device this reproduces the timeline p devices would produce.

#include "profiler/trace/trace_store.h"
#include "runtime/plan/schedule/schedule.h"
#include "runtime/plan/sim/executor.h"

#include <atomic>
#include <functional>
#include <utility>
#include <vector>

namespace bs::runtime {

struct DriveOptions
{
    /// Set from any thread to stop between two actions; drive() then returns ErrorCode::Cancelled
    /// and everything recorded so far stays in the store.
    const std::atomic<bool>* stop = nullptr;
    /// Called after each action with its recorded event (progress, metrics). May be empty.
    std::function<void(const Action&, const profiler::TraceEvent&)> onAction;
    /// Offset added to every timestamp, so a run continued with new settings extends its timeline.
    TimeNs timeOrigin = 0;
    /// Weight versions each stage starts with (continuing runs). Empty = all zero.
    std::vector<int> initialVersions;
    /// Cut at a global-batch boundary (a live Apply; serial drive() only). Once `*cut` reads true
    /// between two actions, the driver fixes the boundary L = the smallest multiple of
    /// `cutEvery` (micro-batches per global batch) that is >= 1 + the highest micro-batch any
    /// stage has started (0 when none). From then on it skips every F/B/I/W of a micro-batch >= L
    /// and every U whose first micro-batch is >= L; a U that straddles L applies only its
    /// micro-batches < L. Every micro-batch < L still completes (all its gradients are applied),
    /// none >= L has started, so the run stops exactly at a batch boundary with no gradient lost.
    /// Keeping the actions of micro-batches < L in their static order stays deadlock-free: every
    /// kept action depends only on kept actions (same micro-batch, earlier in its program).
    const std::atomic<bool>* cut = nullptr;
    int cutEvery = 0;
    /// Added to the micro-batch id of every recorded F/B/I/W and Send event (not to the actions
    /// the executor performs): a run continued in several schedules keeps run-wide ids.
    std::int32_t microbatchOffset = 0;
    /// Events go to the store this many at a time (serial drive() only). 1: each as it happens,
    /// for views that watch a live run. simulate() takes a large batch, since nobody reads its
    /// store before drive() returns: one lock per batch instead of per event, and the events are
    /// written in place (TraceStore::appendSpace), so drive() must be the store's only writer
    /// until it returns. Whatever is left is handed over before drive() returns, on every path.
    std::size_t appendBatch = 1;
};

struct DriveStats
{
    TimeNs makespan = 0; ///< end of the last action, relative to timeOrigin
    std::size_t actions = 0;
    std::vector<int> finalVersions; ///< updates applied per stage, initialVersions included
    /// Micro-batches completed when a cut (DriveOptions::cut) ended the schedule early: a multiple
    /// of cutEvery, below totalMicrobatches(). -1: every action of the schedule ran.
    int cutAt = -1;
};

/// Executes `schedule` through `executor`, appending one event per action (and one Send per
/// cross-stage transfer with non-zero comm time) to `store`. Returns ErrorCode::Deadlock with the
/// blocked actions named if no stage can make progress.
Result<DriveStats> drive(
    const Schedule& schedule, ActionExecutor& executor, profiler::TraceStore& store, const DriveOptions& options = {});

inline profiler::EventKind toEventKind(ActionKind kind)
{
    switch (kind) {
    case ActionKind::Forward:
        return profiler::EventKind::Forward;
    case ActionKind::Backward:
        return profiler::EventKind::Backward;
    case ActionKind::BackwardInput:
        return profiler::EventKind::BackwardInput;
    case ActionKind::BackwardWeight:
        return profiler::EventKind::BackwardWeight;
    case ActionKind::Update:
        return profiler::EventKind::Update;
    case ActionKind::OverlapForwardBackward:
        break; // recorded as its two halves
    }
    return profiler::EventKind::Marker;
}

/// The compute-lane event of one performed action (every driver records actions this way).
/// `version` is the stage's weight version when the action started; times already include any origin.
profiler::TraceEvent actionEvent(const Action& action, TimeNs start, TimeNs end, int version, std::int64_t bytes);

// Inline (here, not in the .cpp): every driver calls both once per action.

/// The stage that receives what `action` produces (F: the next stage's activation, B/I: the
/// previous stage's gradient), or -1 when nothing crosses a stage boundary.
inline int receiverOf(const Action& action, int stages)
{
    if (action.kind == ActionKind::Forward && action.stage < stages - 1) {
        return action.stage + 1;
    }
    if (action.isBackwardLike() && action.stage > 0) {
        return action.stage - 1;
    }
    return -1;
}

/// The stage whose output `action` needs before it can start (F: the previous stage's activation,
/// B/I: the next stage's gradient), or -1 when its input is on its own stage.
inline int senderOf(const Action& action, int stages)
{
    if (action.kind == ActionKind::Forward && action.stage > 0) {
        return action.stage - 1;
    }
    if (action.isBackwardLike() && action.stage < stages - 1) {
        return action.stage + 1;
    }
    return -1;
}

/// Per stage: its index among its rank's stages (chunk c of a rank = its c-th stage in stage
/// order); all 0 when every rank holds one stage.
std::vector<int> chunkOfStage(const Schedule& schedule);

/// Puts the event of `action` (a plain action) on its rank's lane, the way every driver records:
/// event.stage = the rank; on multi-stage ranks aux = the action's chunk (chunkOfStage), except
/// for U, whose aux counts the micro-batches it applied.
void placeOnRank(
    profiler::TraceEvent& event, const Action& action, const Schedule& schedule, const std::vector<int>& chunkOf);

/// The two events an overlapped F&B pair is drawn as on its rank's lane (forward half first):
/// [start, start + share) and [start + share, end), share = `forwardShare` clamped to the span
/// (half of it when < 0).
std::pair<TimeNs, TimeNs> overlapHalves(TimeNs start, TimeNs end, TimeNs forwardShare);

/// "stage S, <action>: <context>": where an executor error happened.
Error atAction(Error error, const Action& action);

} // namespace bs::runtime
