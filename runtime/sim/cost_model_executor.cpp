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
