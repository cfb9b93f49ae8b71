#pragma once
// The simulator's executor: no tensors, durations and sizes from a CostModel.

#include "runtime/plan/sim/cost_model.h"
#include "runtime/plan/sim/executor.h"

#include <cstdint>
#include <vector>

namespace bs::runtime {

class CostModelExecutor final : public ActionExecutor
{
public:
    /// `costs` must have one entry per stage of the schedule it will execute.
    explicit CostModelExecutor(CostModel costs);

    Result<ActionOutcome> perform(const Action& action) override;
    TimeNs commTime(int fromStage, int toStage, std::int64_t bytes) const override;

    /// perform() without the Result, for the scheduler core's direct path (a virtual call and a
    /// Result per action were a tenth of a simulation's drive): false, `outcome` untouched, when
    /// the model has no entry for a stage the action names (perform() then says which), or when
    /// some stage has a ColdCost (perform() tracks which first actions have paid it).
    bool model(const Action& action, ActionOutcome& outcome) const noexcept;

private:
    /// An action's steady outcome (no ColdCost); false when a stage it names has no entry.
    bool steady(const Action& action, ActionOutcome& outcome) const noexcept;

    /// The ColdCost extras of `action` not yet paid on its stage(s), marking them paid.
    TimeNs coldExtra(const Action& action);

    CostModel m_costs;
    bool m_hasCold = false; ///< some stage has a ColdCost: track which first actions ran
    std::vector<std::uint8_t> m_paid; ///< per stage: ColdCost terms already paid (bit per term)
};

// Inline: the scheduler core calls it once per action.
inline bool CostModelExecutor::model(const Action& action, ActionOutcome& outcome) const noexcept
{
    return !m_hasCold && steady(action, outcome);
}

inline bool CostModelExecutor::steady(const Action& action, ActionOutcome& outcome) const noexcept
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

} // namespace bs::runtime
