#pragma once
// The simulator's executor: no tensors, durations and sizes from a CostModel.

#include "runtime/sim/cost_model.h"
#include "runtime/sim/executor.h"

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
    /// the model has no entry for a stage the action names (perform() then says which).
    bool model(const Action& action, ActionOutcome& outcome) const noexcept;

private:
    CostModel m_costs;
};

} // namespace bs::runtime
