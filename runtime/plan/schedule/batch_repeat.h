#pragma once
// Internal to the generators: a flush schedule's program is one batch's actions again and again,
// each copy moved a batch on. Copied as a block and moved in place: built action by action, each
// push_back stored the vector's end and checked its room around every 28-byte action, and that
// was most of generating a long schedule (zb-v at N = 100: 78 400 actions).

#include "runtime/plan/schedule/action.h"

#include <vector>

namespace bs::runtime::detail {

/// What one batch moves each field of an action by.
struct BatchStep
{
    int microbatch, range, pair;
};

inline BatchStep batchStepOf(const Action& a, int m)
{
    const bool isUpdate = a.kind == ActionKind::Update;
    return {isUpdate ? 1 : m, isUpdate ? m : 0, a.isOverlap() ? m : 0};
}

inline void moveBy(Action& a, const BatchStep& step, int batches)
{
    a.microbatch += batches * step.microbatch;
    a.firstMb += batches * step.range;
    a.lastMb += batches * step.range;
    a.pairMicrobatch += batches * step.pair;
}

/// `a` moved `batches` batches of `m` micro-batches on (back, when negative): its micro-batches
/// (an overlapped pair's two) and an update's range by batches·m, an update's index by batches.
/// Inline: the validator compares every action of a long schedule with it (a call per action
/// took validation from 0.3 to 2 ms).
inline Action movedOn(Action a, int batches, int m)
{
    moveBy(a, batchStepOf(a, m), batches);
    return a;
}

/// Appends `batches` copies of `block` to `program`: `block` is batch 0's actions (micro-batches
/// 0..m-1, update index 0 and its range over batch 0's micro-batches), copy n is moved n batches
/// on (micro-batches and update ranges + n·m, update indices + n), n from `from`.
void appendBatches(std::vector<Action>& program, const std::vector<Action>& block, int m, int batches, int from = 0);

} // namespace bs::runtime::detail
