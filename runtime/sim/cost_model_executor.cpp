#include "runtime/sim/cost_model_executor.h"

namespace bs::runtime {

namespace {

// ColdCost terms, one bit each: a B pays the input- and weight-gradient terms not yet paid, so a
// stage mixing B with I/W pays each once.
enum : std::uint8_t { kColdF = 1, kColdI = 2, kColdW = 4, kColdU = 8 };

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
    case ActionKind::Forward: pay(action.stage, kColdF); break;
    case ActionKind::Backward: pay(action.stage, kColdI | kColdW); break;
    case ActionKind::BackwardInput: pay(action.stage, kColdI); break;
    case ActionKind::BackwardWeight: pay(action.stage, kColdW); break;
    case ActionKind::Update: pay(action.stage, kColdU); break;
    case ActionKind::OverlapForwardBackward:
        pay(action.stage, kColdF);
        pay(action.pairStage, kColdI | kColdW);
        break;
    }
    return extra;
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
        outcome.duration += m_hasCold ? coldExtra(action) : 0;
        outcome.bytes = cost.activationBytes;
        outcome.sendBytes = cost.sendBytes;
        return outcome;
    }
    outcome.duration = cost.duration(action.kind) + (m_hasCold ? coldExtra(action) : 0);
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
