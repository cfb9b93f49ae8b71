#include "runtime/plan/sim/cost_model_executor.h"

namespace bs::runtime {

namespace {

// ColdCost terms, one bit each: a B pays the input- and weight-gradient terms not yet paid, so a
// stage mixing B with I/W pays each once.
enum : std::uint8_t
{
    kColdF = 1,
    kColdI = 2,
    kColdW = 4,
    kColdU = 8
};

} // namespace

CostModelExecutor::CostModelExecutor(CostModel costs)
    : m_costs(std::move(costs))
{
    for (const StageCost& s : m_costs.stages) {
        m_hasCold = m_hasCold || s.cold.any();
    }
    if (m_hasCold) {
        m_paid.assign(m_costs.stages.size(), 0);
    }
}

TimeNs CostModelExecutor::coldExtra(const Action& action)
{
    TimeNs extra = 0;
    const auto pay = [&](int stage, std::uint8_t terms) {
        const auto s = static_cast<std::size_t>(stage);
        const ColdCost& cold = m_costs.stages[s].cold;
        const std::uint8_t due = static_cast<std::uint8_t>(terms & ~m_paid[s]);
        m_paid[s] = static_cast<std::uint8_t>(m_paid[s] | terms);
        extra += (due & kColdF ? cold.forward : 0) + (due & kColdI ? cold.backwardInput : 0)
            + (due & kColdW ? cold.backwardWeight : 0) + (due & kColdU ? cold.update : 0);
    };
    switch (action.kind) {
    case ActionKind::Forward:
        pay(action.stage, kColdF);
        break;
    case ActionKind::Backward:
        pay(action.stage, kColdI | kColdW);
        break;
    case ActionKind::BackwardInput:
        pay(action.stage, kColdI);
        break;
    case ActionKind::BackwardWeight:
        pay(action.stage, kColdW);
        break;
    case ActionKind::Update:
        pay(action.stage, kColdU);
        break;
    case ActionKind::OverlapForwardBackward:
        pay(action.stage, kColdF);
        pay(action.pairStage, kColdI | kColdW);
        break;
    }
    return extra;
}

Result<ActionOutcome> CostModelExecutor::perform(const Action& action)
{
    ActionOutcome outcome;
    if (steady(action, outcome)) {
        outcome.duration += m_hasCold ? coldExtra(action) : 0;
        return outcome;
    }
    const int missing =
        static_cast<std::size_t>(action.stage) >= m_costs.stages.size() ? action.stage : action.pairStage;
    return makeError(ErrorCode::InvalidArgument, "cost model has no entry for stage " + std::to_string(missing));
}

TimeNs CostModelExecutor::commTime(int /*fromStage*/, int /*toStage*/, std::int64_t bytes) const
{
    return m_costs.commTime(bytes);
}

} // namespace bs::runtime
