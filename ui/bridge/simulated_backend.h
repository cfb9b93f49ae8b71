#pragma once
// A RunBackend that plays a simulation back as if it were running: events appear in virtual-time
// order, paced so the whole run takes `wallSeconds` of wall time. The demo and tests use it; it
// exercises the same controller, models and views as a live RunSession will.

#include "runtime/plan/sim/simulator.h"
#include "ui/bridge/run_backend.h"

#include <functional>

namespace bs::ui {

class SimulatedBackend final : public RunBackend
{
public:
    struct Options
    {
        double wallSeconds = 4.0; ///< pacing of the whole replay; 0 = publish at once
        int publishHz = 20; ///< snapshots per wall second while replaying
    };

    /// Simulates `request` on the worker thread when run() is called, then replays it.
    SimulatedBackend(std::string label, runtime::SimulationRequest request, Options options);
    /// Replays an existing result (tests).
    SimulatedBackend(std::string label, runtime::SimulationResult result, Options options);

    std::string label() const override { return m_label; }
    Status run(RunContext& ctx) override;

private:
    std::string m_label;
    std::optional<runtime::SimulationRequest> m_request;
    std::optional<runtime::SimulationResult> m_result;
    Options m_options;
};

} // namespace bs::ui
