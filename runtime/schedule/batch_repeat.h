#pragma once
// Internal to the generators: a flush schedule's program is one batch's actions again and again,
// each copy moved a batch on. Copied as a block and moved in place: built action by action, each
// push_back stored the vector's end and checked its room around every 28-byte action, and that
// was most of generating a long schedule (zb-v at N = 100: 78 400 actions).

#include "runtime/schedule/action.h"

#include <vector>

namespace bs::runtime::detail {

/// Appends `batches` copies of `block` to `program`: `block` is batch 0's actions (micro-batches
/// 0..m-1, update index 0 and its range over batch 0's micro-batches), copy n is moved n batches
/// on (micro-batches and update ranges + n·m, update indices + n), n from `from`.
void appendBatches(std::vector<Action>& program, const std::vector<Action>& block, int m, int batches, int from = 0);

} // namespace bs::runtime::detail
