#pragma once
// Proves a schedule legal: every micro-batch does F, then B (or I then W) exactly once per stage,
// updates apply gradients that exist, no deadlock, in-flight micro-batches and (stash policies) weight
// versions held within the stated bounds.

#include "runtime/plan/schedule/schedule.h"

namespace bs::runtime {

/// ok(), or the first violation with the stage, position and action named, and a grid of the
/// schedule with "<-- ERROR HERE" on the offending step.
Status validate(const Schedule& schedule);

/// The part of validate() that keeps code indexing by an action's stage and micro-batch in
/// bounds: every stage a placement names is a rank, every action names a stage of its own rank
/// and (F/B/I/W, an overlapped pair's two halves) a micro-batch in 0..totalMicrobatches()−1. One
/// cheap walk, for the drivers that index by them (the scheduler core asks indicesFit() of each
/// action as it comes instead, and names the first misfit with this). A schedule validate()
/// accepts passes it.
Status checkIndices(const Schedule& schedule);

/// checkIndices()'s first rule alone: every stage the placement names lives on one of the
/// schedule's ranks (an empty placement, one stage per rank, always does).
Status checkStagePlacement(const Schedule& schedule);

/// checkIndices()'s rule for one action of rank `rank`'s program: `rankOf` maps each of the
/// `stages` stages to its rank (a placement checkIndices() accepts), `total` micro-batches.
inline bool indicesFit(const Action& a, int rank, const int* rankOf, int stages, int total)
{
    const auto onRank = [&](int stage) {
        return static_cast<unsigned>(stage) < static_cast<unsigned>(stages) && rankOf[stage] == rank;
    };
    const auto inRange = [&](int mb) { return static_cast<unsigned>(mb) < static_cast<unsigned>(total); };
    if (a.kind == ActionKind::Update) {
        return onRank(a.stage);
    }
    return onRank(a.stage) && inRange(a.microbatch)
        && (!a.isOverlap() || (onRank(a.pairStage) && inRange(a.pairMicrobatch)));
}

/// PyTorch's pipeline-order grid: one column per stage, one row per step.
/// `errorStep` >= 0 marks that row.
std::string formatGrid(const Schedule& schedule, int errorStep = -1, int maxRows = 40);

} // namespace bs::runtime
