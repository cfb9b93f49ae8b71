#pragma once
// Private to bs_model: where a stage's tensors live and in which precision its forward runs.
// Includes torch; only the model's .cpp files use it.

#include <c10/core/DeviceGuard.h>
#include <c10/core/StreamGuard.h>
#include <torch/types.h>

#include <optional>
#include <vector>

namespace bs::runtime::detail {

/// −1 = the CPU, k ≥ 0 = cuda:k.
torch::Device torchDevice(int device);

/// A copy of `t` on `device` (−1 = CPU), always a new tensor (a receive's own buffer). Between two
/// GPUs (cuda_layer.cpp) the copy runs on a copy stream of its own from the pool, neither stage's
/// compute stream: PyTorch copies between devices on the *source* device's current stream and
/// makes the destination's current stream wait for it (aten/src/ATen/native/cuda/Copy.cu,
/// copy_device_to_device), so both devices' current streams are pool streams for the copy. It
/// waits for the producing stage's stream (`fromStage`; −1: the source device's current stream)
/// and the receiving stage's stream (`toStage`; −1: the destination's current stream) waits for
/// it, not the host; the caching allocator is told which streams use the two tensors. Otherwise a
/// plain synchronous Tensor::to.
torch::Tensor copyToDevice(const torch::Tensor& t, int device, int fromStage = -1, int toStage = -1);

/// `host` (a CPU tensor) ready to be copied to `device` without the host waiting: in pinned
/// memory for a CUDA device (a copy from pageable memory is synchronous), itself for the CPU.
torch::Tensor stagedForCopy(const torch::Tensor& host, int device);

/// Stage `stage`'s own stream on CUDA device `device` (stageStreamHandle()); nullopt on the CPU.
std::optional<c10::Stream> stageStream(int device, int stage);

/// One generator's state (recompute replays a forward's dropout masks).
struct RngState
{
    c10::Device device;
    torch::Tensor state;
};
/// The generators dropout draws from for a stage on `device`: the CPU's, and on CUDA device k
/// also cuda:k's (CUDA dropout never draws from the CPU generator).
std::vector<c10::Device> dropoutGeneratorDevices(int device);
/// Their states now; restoreRngStates() sets them back.
std::vector<RngState> dropoutRngStates(int device);
void restoreRngStates(const std::vector<RngState>& states);

/// Around the work of one action on a stage: makes the stage's CUDA device current and, given the
/// stage, its own stream (stageStream; a no-op on the CPU) and, with bf16, enables autocast to bf16 for that device
/// type (fp32 weights stay the master copy; autograd records the casts, so backward passes need no scope of their own).
/// The autocast weight cache is cleared when the outermost scope ends, so an update between two actions is always seen
/// by the next forward.
class ComputeScope
{
public:
    ComputeScope(int device, bool bf16, int stage = -1);
    ~ComputeScope();
    ComputeScope(const ComputeScope&) = delete;
    ComputeScope& operator=(const ComputeScope&) = delete;

private:
    c10::OptionalDeviceGuard m_guard; // restores the previous device when the scope ends
    c10::OptionalStreamGuard m_stream; // and, before it, the device's previous current stream
    c10::DeviceType m_type = c10::DeviceType::CPU;
    bool m_autocast = false;
    bool m_wasEnabled = false;
    c10::ScalarType m_previousDtype = c10::ScalarType::BFloat16;
};

} // namespace bs::runtime::detail
