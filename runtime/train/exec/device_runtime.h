#pragma once
// Everything a run does differently on a GPU, in one place so RunSession stays device-blind:
// the device plan (device_plan.h), CUDA memory attribution per stage (device_memory.h), per-stage
// CUDA-event timers for the executor, and CUPTI kernel lanes (gpu_trace.h). On the CPU it only
// holds the plan: the executor keeps its host timers and nothing else is started.
//
// When CUPTI cannot start (no permission, another profiler holds it, a build without CUPTI) the
// run goes on with CUDA-event timings and no kernel lanes; notes() says why, once, and the trace
// attributes record it (cupti = "unavailable: ...").

#include "base/result.h"
#include "profiler/trace/trace_store.h"
#include "runtime/plan/config/run_config.h"
#include "runtime/train/exec/device_plan.h"
#include "runtime/train/exec/gpu_trace.h"
#include "runtime/train/exec/tensor_executor.h"
#include "runtime/train/model/model_options.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

class DeviceMemoryAttributor;
class AllocatorStats;

struct DeviceRuntimeOptions
{
    /// The probe results (defaults: this LibTorch's, torch_devices.h). Tests pass their own.
    std::optional<bool> torchHasCuda;
    std::optional<int> cudaDevices;
    /// CUPTI (default: profiler/cupti's collector). Tests pass a fake.
    KernelCollectorFactory collectors;
    /// The CUDA caching allocator's counters (default: cuda_layer.cpp's). Tests pass a fake.
    AllocatorStats* allocator = nullptr;
    /// CUDA-event timers per stage (default: makeStageTimer). Tests pass host timers.
    std::function<Result<std::unique_ptr<ActionTimer>>(int device)> timers;
    bool profileKernels = true; ///< false: no CUPTI even on a GPU (profiling.trace off)
};

class DeviceRuntime
{
public:
    /// `stages`: stage slots of the model (1 for the reference trainer). Errors as planDevices().
    static Result<std::unique_ptr<DeviceRuntime>> create(
        const RunConfig& config, int stages, profiler::TraceStore& trace, DeviceRuntimeOptions options = {});
    ~DeviceRuntime();

    const DevicePlan& plan() const { return m_plan; }
    /// Puts the stages on their devices and sets the precision.
    void configure(ModelOptions& model) const;
    /// Gives the executor its per-stage timers, device turns and (GPU runs) CUPTI's tag sink.
    Status attach(TensorExecutor& executor) const;
    /// After each action the driver placed: maps its kernels onto the trace's clock and moves
    /// those delivered so far. Thread-safe; a no-op without CUPTI.
    void placed(const profiler::TraceEvent& action);
    /// Stops CUPTI, drains the kernel lanes and writes device.* / cupti.* attributes.
    Status finish(profiler::TraceMeta& meta);

    /// Things the user should hear once (CUPTI unavailable and why).
    const std::vector<std::string>& notes() const { return m_notes; }
    bool kernelLanes() const { return m_gpuTrace != nullptr; }

private:
    DeviceRuntime() = default;

    DevicePlan m_plan;
    DeviceRuntimeOptions m_options;
    std::unique_ptr<DeviceMemoryAttributor> m_memory;
    std::unique_ptr<GpuTrace> m_gpuTrace;
    std::vector<std::string> m_notes;
    bool m_finished = false;
};

} // namespace bs::runtime
