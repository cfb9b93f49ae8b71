// Activation recompute priced for the simulator (recompute_costs.h).
#include "runtime/plan/sim/recompute_costs.h"

namespace bs::runtime {

std::int64_t recomputeInputBytes(const GptShape& shape, int microBatch, int stage, int stages)
{
    const std::int64_t tokens = static_cast<std::int64_t>(microBatch) * shape.seqLen;
    std::int64_t bytes = stage == 0 ? tokens * 8 : tokens * shape.dModel * 4; // int64 ids or fp32 hidden state
    if (stage == stages - 1) {
        bytes += tokens * 8; // the targets, for the recomputed loss
    }
    return bytes;
}

CostModel withRecompute(CostModel costs, const GptShape& shape, int microBatch)
{
    const int p = static_cast<int>(costs.stages.size());
    for (int s = 0; s < p; ++s) {
        StageCost& c = costs.stages[static_cast<std::size_t>(s)];
        c.backwardInput += c.forward;
        if (costs.bytesKnown) {
            c.recomputeBytes = c.activationBytes;
            c.activationBytes = recomputeInputBytes(shape, microBatch, s, p);
        }
    }
    return costs;
}

} // namespace bs::runtime
