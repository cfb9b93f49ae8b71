// The device layer of a CPU-only LibTorch (Debian's 1.13): no CUDA timer, no CUDA allocator.
// cuda_layer.cpp replaces this file when the LibTorch has CUDA.
#include "runtime/train/model/device_p.h"
#include "runtime/train/model/torch_devices.h"

namespace bs::runtime::detail {

Result<std::unique_ptr<ActionTimer>> makeCudaTimer(int device, int /*stage*/)
{
    return makeError(
        ErrorCode::Unavailable, "this LibTorch build is CPU-only: no CUDA timer", "cuda:" + std::to_string(device));
}

AllocatorStats* cudaAllocatorStats()
{
    return nullptr;
}

torch::Tensor copyToDevice(const torch::Tensor& t, int device, int /*fromStage*/, int /*toStage*/)
{
    return t.to(t.options().device(torchDevice(device)), /*non_blocking=*/false, /*copy=*/true);
}

torch::Tensor stagedForCopy(const torch::Tensor& host, int /*device*/)
{
    return host; // no CUDA device in this build: nothing to copy to
}

std::optional<c10::Stream> stageStream(int /*device*/, int /*stage*/)
{
    return std::nullopt;
}

} // namespace bs::runtime::detail

namespace bs::runtime {

void* stageStreamHandle(int /*device*/, int /*stage*/)
{
    return nullptr;
}

} // namespace bs::runtime
