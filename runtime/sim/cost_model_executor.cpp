#include "runtime/sim/cost_model_executor.h"

namespace bs::runtime {

CostModelExecutor::CostModelExecutor(CostModel costs)
    : m_costs(std::move(costs))
{
}

Result<ActionOutcome> CostModelExecutor::perform(const Action& action)
{
    const auto s = static_cast<std::size_t>(action.stage);
    if (s >= m_costs.stages.size()) {
        return makeError(ErrorCode::InvalidArgument, "cost model has no entry for stage " + std::to_string(action.stage));
    }
    const StageCost& cost = m_costs.stages[s];
    ActionOutcome outcome;
    if (action.isOverlap()) {
        const auto b = static_cast<std::size_t>(action.pairStage);
        if (b >= m_costs.stages.size()) {
            return makeError(ErrorCode::InvalidArgument,
                             "cost model has no entry for stage " + std::to_string(action.pairStage));
        }
        const TimeNs f = cost.forward;
        const TimeNs back = m_costs.stages[b].duration(ActionKind::Backward);
        outcome.duration = cost.forwardBackward > 0 ? cost.forwardBackward : f + back;
        outcome.forwardShare = f + back > 0 ? outcome.duration * f / (f + back) : 0;
        outcome.bytes = cost.activationBytes;
        outcome.sendBytes = cost.sendBytes;
        return outcome;
    }
    outcome.duration = cost.duration(action.kind);
    if (action.kind == ActionKind::Forward) {
        outcome.bytes = cost.activationBytes;
    }
    if (action.kind != ActionKind::Update && action.kind != ActionKind::BackwardWeight) {
        outcome.sendBytes = cost.sendBytes;
    }
    return outcome;
}

TimeNs CostModelExecutor::commTime(int /*fromStage*/, int /*toStage*/, std::int64_t bytes) const
{
    return m_costs.commTime(bytes);
}

} // namespace bs::runtime
