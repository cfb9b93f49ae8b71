#pragma once
// A RunBackend over the live LibTorch runtime (runtime/train/exec/run_session.h, torch-free header):
// the run trains on the controller's worker thread while a poller publishes the growing trace and
// the new metrics every 100 ms and forwards Stop to RunSession::requestStop(). Built only when
// the runtime (bs_exec) is part of the build; see README.md.

#include "runtime/plan/config/run_config.h"
#include "runtime/train/exec/run_session.h"
#include "ui/bridge/run_backend.h"

#include <mutex>

namespace bs::ui {

class RunSessionBackend final : public RunBackend
{
public:
    /// Trains `config` for config.training.steps global batches, as one schedule (asynchronous
    /// schedules drain only at the end, or at the boundary where an apply() takes effect). `options.outDir` makes it a run directory.
    RunSessionBackend(std::string label, runtime::RunConfig config, runtime::SessionOptions options = {});

    /// On: before training, RunSession::warmUp() of the same config (the first of runs compared
    /// one after the other would otherwise pay the process's one-time start-up costs).
    void setWarmUp(bool on) { m_warmUp = on; }

    std::string label() const override { return m_label; }
    Status run(RunContext& ctx) override;
    /// Forwards to RunSession::requestApply() of the running session (Unavailable when none runs).
    Status apply(const runtime::RunConfig& wanted) override;

private:
    std::mutex m_sessionMutex; // guards m_session: set while run() trains
    runtime::RunSession* m_session = nullptr;
    std::string m_label;
    runtime::RunConfig m_config;
    runtime::SessionOptions m_options;
    bool m_warmUp = false;
};

} // namespace bs::ui
