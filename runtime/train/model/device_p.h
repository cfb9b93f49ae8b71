#pragma once
// Private to bs_model: where a stage's tensors live and in which precision its forward runs.
// Includes torch; only the model's .cpp files use it.

#include <c10/core/DeviceGuard.h>
#include <torch/types.h>

namespace bs::runtime::detail {

/// −1 = the CPU, k ≥ 0 = cuda:k.
torch::Device torchDevice(int device);

/// A copy of `t` on `device` (−1 = CPU), always a new tensor (a receive's own buffer). Between two
/// GPUs (cuda_layer.cpp) the copy runs on a dedicated stream of the destination from the
/// pool: it waits for the source device's current stream (where the tensor was produced), and the
/// destination's current stream waits for it, so the copy overlaps other work on neither side's
/// compute stream; the caching allocator is told which streams use the two tensors. Otherwise a
/// plain synchronous Tensor::to.
torch::Tensor copyToDevice(const torch::Tensor& t, int device);

/// Around the work of one action on a stage: makes the stage's CUDA device current (a no-op on
/// the CPU) and, with bf16, enables autocast to bf16 for that device type (fp32 weights stay the
/// master copy; autograd records the casts, so backward passes need no scope of their own). The
/// autocast weight cache is cleared when the outermost scope ends, so an update between two
/// actions is always seen by the next forward.
class ComputeScope
{
public:
    ComputeScope(int device, bool bf16);
    ~ComputeScope();
    ComputeScope(const ComputeScope&) = delete;
    ComputeScope& operator=(const ComputeScope&) = delete;

private:
    c10::OptionalDeviceGuard m_guard; // restores the previous device when the scope ends
    c10::DeviceType m_type = c10::DeviceType::CPU;
    bool m_autocast = false;
    bool m_wasEnabled = false;
    c10::ScalarType m_previousDtype = c10::ScalarType::BFloat16;
};

} // namespace bs::runtime::detail
