#include "runtime/train/exec/device_runtime.h"

#include "runtime/train/model/device_memory.h"
#include "runtime/train/model/torch_devices.h"

namespace bs::runtime {

DeviceRuntime::~DeviceRuntime()
{
    if (m_memory && installedDeviceMemory() == m_memory.get()) {
        installDeviceMemory(nullptr);
    }
}

Result<std::unique_ptr<DeviceRuntime>> DeviceRuntime::create(
    const RunConfig& config, int stages, profiler::TraceStore& trace, DeviceRuntimeOptions options)
{
    const bool hasCuda = options.torchHasCuda.value_or(torchHasCuda());
    const int devices = options.cudaDevices ? *options.cudaDevices : hasCuda ? torchCudaDeviceCount() : 0;
    auto plan = planDevices(config, stages, hasCuda, devices);
    if (!plan) {
        return plan.error();
    }
    std::unique_ptr<DeviceRuntime> rt(new DeviceRuntime());
    rt->m_plan = std::move(plan.value());
    rt->m_options = std::move(options);
    if (!rt->m_plan.cuda) {
        return rt;
    }
    AllocatorStats* allocator = rt->m_options.allocator ? rt->m_options.allocator : detail::cudaAllocatorStats();
    if (allocator) {
        rt->m_memory = std::make_unique<DeviceMemoryAttributor>(*allocator, rt->m_plan.stageDevice);
        installDeviceMemory(rt->m_memory.get());
    }
    if (rt->m_options.profileKernels) {
        const KernelCollectorFactory& factory =
            rt->m_options.collectors ? rt->m_options.collectors : cuptiCollectorFactory();
        auto gpuTrace = GpuTrace::start(trace, factory);
        if (gpuTrace) {
            rt->m_gpuTrace = std::move(gpuTrace.value());
        } else {
            rt->m_notes.push_back("CUPTI kernel lanes off: " + gpuTrace.error().describe()
                + " (the run goes on; action times come from CUDA events)");
        }
    }
    return rt;
}

void DeviceRuntime::configure(ModelOptions& model) const
{
    model.stageDevice = m_plan.stageDevice;
    model.bf16 = m_plan.bf16;
}

Status DeviceRuntime::attach(TensorExecutor& executor) const
{
    if (!m_plan.cuda) {
        return ok(); // the executor's host timers: the CPU path as it always was
    }
    std::vector<std::unique_ptr<ActionTimer>> timers;
    for (std::size_t s = 0; s < m_plan.stageDevice.size(); ++s) {
        const int device = m_plan.stageDevice[s];
        auto timer = m_options.timers ? m_options.timers(device) : makeStageTimer(device, static_cast<int>(s));
        if (!timer) {
            return timer.error();
        }
        timers.push_back(std::move(timer.value()));
    }
    return executor.useDevices(std::move(timers), m_plan.stageDevice, m_gpuTrace.get());
}

void DeviceRuntime::placed(const profiler::TraceEvent& action)
{
    if (m_gpuTrace) {
        m_gpuTrace->placed(action);
        m_gpuTrace->drain();
    }
}

Status DeviceRuntime::finish(profiler::TraceMeta& meta)
{
    meta.attributes["device"] = m_plan.description;
    meta.attributes["dtype"] = m_plan.bf16 ? "bf16" : "fp32";
    if (!m_plan.cuda) {
        return ok();
    }
    meta.attributes["timing"] = "cuda-events";
    if (m_memory) {
        meta.attributes["memory"] = "cuda caching allocator, attributed by active stage";
    }
    if (!m_gpuTrace) {
        meta.attributes["cupti"] = m_notes.empty() ? std::string("off") : "unavailable: " + m_notes.front();
        return ok();
    }
    if (m_finished) {
        return ok();
    }
    m_finished = true;
    return m_gpuTrace->finish(meta);
}

} // namespace bs::runtime
