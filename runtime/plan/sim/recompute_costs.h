#pragma once
// Activation recompute (model.recompute) in the cost model: what the runtime does
// (runtime/train/model/pipeline_model_p.h, recomputeForward) priced for the simulator.
//   time:   every backward first runs the stage's forward again: I (and so B = I + W) + F;
//   memory: an in-flight micro-batch holds only the stage's input (stage 0: the token ids; the
//           last stage also its targets) instead of every activation its forward saved; the one
//           being backwarded holds its full activations meanwhile (StageCost::recomputeBytes).

#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/sim/cost_model.h"

namespace bs::runtime {

/// `costs` (from costModelFromGpt for `shape` at `microBatch` sequences) with recompute.
CostModel withRecompute(CostModel costs, const GptShape& shape, int microBatch);

/// Bytes a recompute stage keeps per in-flight micro-batch: its input (token ids or the hidden
/// state handed over), plus the targets on the last stage.
std::int64_t recomputeInputBytes(const GptShape& shape, int microBatch, int stage, int stages);

} // namespace bs::runtime
