#pragma once
// The simulator's executor: no tensors, durations and sizes from a CostModel.

#include "runtime/sim/cost_model.h"
#include "runtime/sim/executor.h"

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

private:
    /// The ColdCost extras of `action` not yet paid on its stage(s), marking them paid.
    TimeNs coldExtra(const Action& action);

    CostModel m_costs;
    bool m_hasCold = false; ///< some stage has a ColdCost: track which first actions ran
    std::vector<std::uint8_t> m_paid; ///< per stage: ColdCost terms already paid (bit per term)
};

} // namespace bs::runtime
