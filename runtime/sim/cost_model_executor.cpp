#include "runtime/sim/cost_model_executor.h"

namespace bs::runtime {

CostModelExecutor::CostModelExecutor(CostModel costs)
    : m_costs(std::move(costs))
{
}

bool CostModelExecutor::model(const Action& action, ActionOutcome& outcome) const noexcept
{
    const auto s = static_cast<std::size_t>(action.stage);
    if (s >= m_costs.stages.size()) {
        return false;
    }
    const StageCost& cost = m_costs.stages[s];
    ActionOutcome out;
    if (action.isOverlap()) {
        const auto b = static_cast<std::size_t>(action.pairStage);
        if (b >= m_costs.stages.size()) {
            return false;
        }
        const TimeNs f = cost.forward;
        const TimeNs back = m_costs.stages[b].duration(ActionKind::Backward);
        out.duration = cost.forwardBackward > 0 ? cost.forwardBackward : f + back;
        out.forwardShare = f + back > 0 ? out.duration * f / (f + back) : 0;
        out.bytes = cost.activationBytes;
        out.sendBytes = cost.sendBytes;
        outcome = out;
        return true;
    }
    out.duration = cost.duration(action.kind);
    if (action.kind == ActionKind::Forward) {
        out.bytes = cost.activationBytes;
    }
    if (action.kind != ActionKind::Update && action.kind != ActionKind::BackwardWeight) {
        out.sendBytes = cost.sendBytes;
    }
    outcome = out;
    return true;
}

Result<ActionOutcome> CostModelExecutor::perform(const Action& action)
{
    ActionOutcome outcome;
    if (model(action, outcome)) {
        return outcome;
    }
    const int missing = static_cast<std::size_t>(action.stage) >= m_costs.stages.size() ? action.stage : action.pairStage;
    return makeError(ErrorCode::InvalidArgument, "cost model has no entry for stage " + std::to_string(missing));
}

TimeNs CostModelExecutor::commTime(int /*fromStage*/, int /*toStage*/, std::int64_t bytes) const
{
    return m_costs.commTime(bytes);
}

} // namespace bs::runtime
