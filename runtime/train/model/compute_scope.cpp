#include "runtime/train/model/device_p.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

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
    return type == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype() : at::autocast::get_autocast_gpu_dtype();
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

ComputeScope::ComputeScope(int device, bool bf16)
{
    if (device >= 0) {
        m_type = c10::DeviceType::CUDA;
        m_guard.reset_device(torchDevice(device));
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
