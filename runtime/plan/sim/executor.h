#pragma once
// The one interface through which the scheduler core gets work done. The cost-model executor
// answers from a formula (simulate); the tensor executor runs real LibTorch stages (train).

#include "base/result.h"
#include "base/time.h"
#include "runtime/plan/schedule/action.h"

#include <cstdint>

namespace bs::runtime {

struct ActionOutcome
{
    TimeNs duration = 0; ///< how long the action took on its stage (measured or modelled)
    std::int64_t bytes = 0; ///< F: activation bytes this micro-batch now holds on the stage
    std::int64_t sendBytes = 0; ///< F/B/I: bytes of the tensor handed to the neighbour stage
    /// Overlapped F&B pair only: how much of `duration` the trace shows as the forward half (the
    /// two halves are drawn one after the other on the rank's lane); < 0 = half of it.
    TimeNs forwardShare = -1;
};

class ActionExecutor
{
public:
    virtual ~ActionExecutor() = default;
    /// Performs (or models) one action. Called from the scheduler core's thread, in a legal
    /// global order: every input the action needs has already been produced.
    virtual Result<ActionOutcome> perform(const Action& action) = 0;
    /// Time for `bytes` to travel from `fromStage` to `toStage`.
    virtual TimeNs commTime(int fromStage, int toStage, std::int64_t bytes) const = 0;
};

} // namespace bs::runtime
