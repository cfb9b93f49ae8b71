#include "runtime/sim/cost_model_executor.h"

namespace bs::runtime {

CostModelExecutor::CostModelExecutor(CostModel costs)
    : m_costs(std::move(costs))
{
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
