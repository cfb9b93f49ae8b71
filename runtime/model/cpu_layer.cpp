// The device layer of a CPU-only LibTorch (Debian's 1.13): no CUDA timer, no CUDA allocator.
// cuda_layer.cpp replaces this file when the LibTorch has CUDA.
#include "runtime/model/torch_devices.h"

namespace bs::runtime::detail {

Result<std::unique_ptr<ActionTimer>> makeCudaTimer(int device)
{
    return makeError(ErrorCode::Unavailable, "this LibTorch build is CPU-only: no CUDA timer",
                     "cuda:" + std::to_string(device));
}

AllocatorStats* cudaAllocatorStats()
{
    return nullptr;
}

} // namespace bs::runtime::detail
