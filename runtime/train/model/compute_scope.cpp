#include "runtime/train/model/device_p.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <mutex>

namespace bs::runtime::detail {

namespace {

// LibTorch 2.x names autocast by device type; 1.13 has one function pair per device.
bool autocastEnabled(c10::DeviceType type)
{
#if TORCH_VERSION_MAJOR >= 2
    return at::autocast::is_autocast_enabled(type);
#else
    return type == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

c10::ScalarType autocastDtype(c10::DeviceType type)
{
#if TORCH_VERSION_MAJOR >= 2
    return at::autocast::get_autocast_dtype(type);
#else
    return type == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                        : at::autocast::get_autocast_gpu_dtype();
#endif
}

void setAutocast(c10::DeviceType type, bool enabled, c10::ScalarType dtype)
{
#if TORCH_VERSION_MAJOR >= 2
    at::autocast::set_autocast_enabled(type, enabled);
    at::autocast::set_autocast_dtype(type, dtype);
#else
    if (type == c10::DeviceType::CPU) {
        at::autocast::set_cpu_enabled(enabled);
        at::autocast::set_autocast_cpu_dtype(dtype);
    } else {
        at::autocast::set_enabled(enabled);
        at::autocast::set_autocast_gpu_dtype(dtype);
    }
#endif
}

} // namespace

torch::Device torchDevice(int device)
{
    return device < 0 ? torch::Device(torch::kCPU) : torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device));
}

std::vector<c10::Device> dropoutGeneratorDevices(int device)
{
    std::vector<c10::Device> out{c10::Device(c10::DeviceType::CPU)};
    if (device >= 0) {
        out.push_back(torchDevice(device));
    }
    return out;
}

std::vector<RngState> dropoutRngStates(int device)
{
    std::vector<RngState> out;
    for (const c10::Device d : dropoutGeneratorDevices(device)) {
        at::Generator gen = at::globalContext().defaultGenerator(d);
        const std::lock_guard<std::mutex> lock(gen.mutex());
        out.push_back(RngState{d, gen.get_state()});
    }
    return out;
}

void restoreRngStates(const std::vector<RngState>& states)
{
    for (const RngState& s : states) {
        at::Generator gen = at::globalContext().defaultGenerator(s.device);
        const std::lock_guard<std::mutex> lock(gen.mutex());
        gen.set_state(s.state);
    }
}

ComputeScope::ComputeScope(int device, bool bf16, int stage)
{
    if (device >= 0) {
        m_type = c10::DeviceType::CUDA;
        m_guard.reset_device(torchDevice(device));
        if (const std::optional<c10::Stream> own = stageStream(device, stage)) {
            m_stream.reset_stream(*own);
        }
    }
    if (bf16) {
        m_autocast = true;
        m_wasEnabled = autocastEnabled(m_type);
        m_previousDtype = autocastDtype(m_type);
        setAutocast(m_type, true, c10::ScalarType::BFloat16);
        at::autocast::increment_nesting();
    }
}

ComputeScope::~ComputeScope()
{
    if (m_autocast) {
        if (at::autocast::decrement_nesting() == 0) {
            at::autocast::clear_cache(); // bf16 copies of weights an update is about to change
        }
        setAutocast(m_type, m_wasEnabled, m_previousDtype);
    }
}

} // namespace bs::runtime::detail
