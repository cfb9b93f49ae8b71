#pragma once
// Pre-flight (issue 14): before a run allocates anything, the simulator's memory estimate per
// stage is compared with the memory the stages will share, so `train --model gpt2-medium
// --micro-batch-size 512` is refused in milliseconds with the estimate and the nearest micro-batch
// size that fits, instead of failing 76 s and 6.9 GB later with a stack trace. Torch-free.
//
// Hook for devices: the caller passes the bytes available where the stages live: host RAM for the
// CPU (availableHostMemoryBytes()); a GPU's memory on CUDA, with `stagesSharingMemory` the stages
// placed on that one device. run_preflight.h does this for every way a run starts.

#include "base/result.h"
#include "runtime/plan/sim/tuner.h"

#include <cstdint>

namespace bs::runtime {

struct MemoryEstimate
{
    std::int64_t peakStageBytes = 0; ///< the largest stage's simulated peak
    std::int64_t totalBytes = 0; ///< sum over the stages that share the memory
};

/// The simulator's per-stage peak memory for `scenario` (one global batch of m = scenario.accum
/// micro-batches), summed over the first `stagesSharingMemory` stages' worth (all of them when 0).
Result<MemoryEstimate> estimateMemory(const GptScenario& scenario, int stagesSharingMemory = 0);

/// ok when the estimate fits in `availableBytes`; otherwise InvalidArgument naming the estimate,
/// the limit and the largest micro-batch size b' < b that fits ("none" when even b = 1 does not).
Status checkMemoryFits(const GptScenario& scenario, std::int64_t availableBytes, int stagesSharingMemory = 0);

/// MemAvailable from /proc/meminfo, lowered to a cgroup v2 memory.max when one is set; 0 when
/// unknown (then no check is made).
std::int64_t availableHostMemoryBytes();

} // namespace bs::runtime
