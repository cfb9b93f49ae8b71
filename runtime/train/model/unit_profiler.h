#pragma once
// The measured partition's profiling pass: every layer unit of the GPT (embedding, each block,
// final norm, head + loss; gpt_shape.h) built alone on the run's device and timed forward and
// backward for one micro-batch (rounds over all units, the fastest pass of each kept), with its static bytes (weights +
// gradients + AdamW's two moments, from the tensors' sizes) and the bytes its forward keeps alive for the backward
// (measured: the CPU allocator tracker on the CPU, the CUDA caching allocator's counters on a GPU). On a GPU the passes
// are timed with the executor's ActionTimer (CUDA events); on the CPU with the process's CPU time, which a loaded,
// shared machine does not inflate by the time a pass waited for a core. Torch-free header.

#include "base/result.h"
#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/partition/stage_partitioner.h"

#include <cstdint>
#include <vector>

namespace bs::runtime {

struct UnitProfileOptions
{
    GptShape shape;
    int microBatchSize = 1;
    int device = -1; ///< −1 = the CPU, k = cuda:k
    bool bf16 = false; ///< forward under autocast, as the run will
    int warmup = 1; ///< untimed passes per unit (allocator and kernel caches)
    int repeats = 9; ///< timed rounds over all units (shuffled); each unit's fastest is kept
    std::uint64_t seed = 1234;
};

/// One UnitCost per layer unit, in order (layerUnitCount(shape) of them). Errors: bad options
/// (InvalidArgument naming the field), no such device (Unavailable), a failing pass (Internal).
Result<std::vector<UnitCost>> profileLayerUnits(const UnitProfileOptions& options);

} // namespace bs::runtime
