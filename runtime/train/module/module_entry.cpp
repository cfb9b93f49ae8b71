// The training runtime module's entry point: wraps the real RunSession (runtime/train/exec) and
// trainDistributed (runtime/train/dist) in the table of runtime_module_api.h. Built as
// libbubblescope-runtime-<cpu|cuda>.so, one per LibTorch build.

#include "runtime/train/module/runtime_module_api.h"

#include <torch/version.h>

#ifndef BS_PROJECT_VERSION
#define BS_PROJECT_VERSION ""
#endif
#ifndef BS_MODULE_DESCRIPTION
#define BS_MODULE_DESCRIPTION "LibTorch " TORCH_VERSION
#endif

namespace bs::runtime {

namespace {

class LoadedSession final : public ModuleSession
{
public:
    explicit LoadedSession(RunSession session)
        : m_session(std::move(session))
    {}
    Status runSteps(int count) override { return m_session.runSteps(count); }
    Status run() override { return m_session.run(); }
    Status finish() override { return m_session.finish(); }
    void requestStop() override { m_session.requestStop(); }
    Status requestApply(const RunConfig& wanted) override { return m_session.requestApply(wanted); }
    std::vector<AppliedChange> appliedChanges() const override { return m_session.appliedChanges(); }
    std::vector<BatchMetrics> pollMetrics() override { return m_session.pollMetrics(); }
    int stepsDone() const override { return m_session.stepsDone(); }
    RunSummary summary() const override { return m_session.summary(); }
    std::shared_ptr<const profiler::TraceSnapshot> trace() const override { return m_session.trace(); }
    const RunConfig& config() const override { return m_session.config(); }

private:
    RunSession m_session;
};

Result<std::unique_ptr<ModuleSession>> create(const RunConfig& config, const SessionOptions& options)
{
    auto session = RunSession::create(config, options);
    if (!session) {
        return session.error();
    }
    return std::unique_ptr<ModuleSession>(std::make_unique<LoadedSession>(std::move(*session)));
}

RuntimeModuleApi makeApi()
{
    RuntimeModuleApi api;
    api.abi = kRuntimeModuleAbi;
    api.layoutKey = runtimeModuleLayoutKey();
    api.version = BS_PROJECT_VERSION;
    api.description = BS_MODULE_DESCRIPTION;
#ifdef BS_MODULE_CUDA
    api.cuda = true;
#endif
    api.warmUp = &RunSession::warmUp;
    api.create = &create;
    api.trainDistributed = &trainDistributed;
    api.measureLayerUnits = &measureLayerUnits;
    return api;
}

} // namespace

} // namespace bs::runtime

extern "C" __attribute__((visibility("default"))) const bs::runtime::RuntimeModuleApi* bubblescope_runtime_module_v1()
{
    static const bs::runtime::RuntimeModuleApi api = bs::runtime::makeApi();
    return &api;
}
