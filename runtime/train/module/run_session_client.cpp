// RunSession (runtime/train/exec/run_session.h) as the CLI and the GUI link it: a forwarder to the
// training runtime module, loaded for the run's device when the first session (or warm-up, or
// distributed rank) starts. The implementation with the same header, runtime/train/exec/run_session.cpp,
// lives inside the module; the module exports only its entry symbol (hidden visibility,
// --exclude-libs), so the two definitions never meet. Never link bs_exec and this library into
// one program.

#include "runtime/train/module/module_loader.h"
#include "runtime/train/module/runtime_module_api.h"

namespace bs::runtime {

struct RunSession::Impl
{
    std::unique_ptr<ModuleSession> session;
};

RunSession::RunSession(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{}
RunSession::RunSession(RunSession&&) noexcept = default;
RunSession& RunSession::operator=(RunSession&&) noexcept = default;
RunSession::~RunSession() = default;

Result<std::vector<UnitCost>> measureLayerUnits(const RunConfig& config)
{
    auto api = loadRuntimeModule(config.device.name);
    if (!api) {
        return api.error();
    }
    return (*api)->measureLayerUnits(config);
}

Status RunSession::warmUp(const RunConfig& config)
{
    auto api = loadRuntimeModule(config.device.name);
    if (!api) {
        return api.error();
    }
    return (*api)->warmUp(config);
}

Result<RunSession> RunSession::create(const RunConfig& config, const SessionOptions& options)
{
    auto api = loadRuntimeModule(config.device.name);
    if (!api) {
        return api.error();
    }
    auto session = (*api)->create(config, options);
    if (!session) {
        return session.error();
    }
    auto impl = std::make_unique<Impl>();
    impl->session = std::move(*session);
    return RunSession(std::move(impl));
}

Status RunSession::runSteps(int count)
{
    return m_impl->session->runSteps(count);
}
Status RunSession::run()
{
    return m_impl->session->run();
}
Status RunSession::finish()
{
    return m_impl->session->finish();
}
void RunSession::requestStop()
{
    m_impl->session->requestStop();
}
Status RunSession::requestApply(const RunConfig& wanted)
{
    return m_impl->session->requestApply(wanted);
}
std::vector<AppliedChange> RunSession::appliedChanges() const
{
    return m_impl->session->appliedChanges();
}
std::vector<BatchMetrics> RunSession::pollMetrics()
{
    return m_impl->session->pollMetrics();
}
int RunSession::stepsDone() const
{
    return m_impl->session->stepsDone();
}
RunSummary RunSession::summary() const
{
    return m_impl->session->summary();
}
std::shared_ptr<const profiler::TraceSnapshot> RunSession::trace() const
{
    return m_impl->session->trace();
}
const RunConfig& RunSession::config() const
{
    return m_impl->session->config();
}

Result<nlohmann::json> trainDistributed(const RunConfig& config, const DistEnv& env, const DistRunOptions& options)
{
    auto api = loadRuntimeModule(config.device.name);
    if (!api) {
        return api.error();
    }
    return (*api)->trainDistributed(config, env, options);
}

} // namespace bs::runtime
