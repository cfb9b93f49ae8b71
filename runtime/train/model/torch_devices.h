#pragma once
// What the linked LibTorch can do with devices, asked without including torch (the executor,
// the run session and the CLI use it). The CUDA-only parts live in cuda_layer.cpp, built only
// against a CUDA LibTorch (BS_TORCH_HAS_CUDA); a CPU-only LibTorch gets cpu_layer.cpp's answers.

#include "base/result.h"
#include "runtime/train/model/device_timer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace bs::runtime {

/// True when this program was built against a LibTorch with CUDA (PyPI's torch wheel); false for
/// a CPU-only one (Debian's libtorch 1.13).
bool torchHasCuda();
/// CUDA devices LibTorch sees (0 without a driver, a device, or a CUDA LibTorch).
int torchCudaDeviceCount();
/// "2.11.0" etc.: the LibTorch this program was built against.
std::string torchVersion();

/// The caching allocator's counters of one CUDA device (c10::cuda::CUDACachingAllocator).
struct AllocatorSample
{
    std::int64_t allocated = 0; ///< bytes in live tensors now
    std::int64_t reserved = 0; ///< bytes the allocator holds from the driver now
    std::int64_t peakAllocated = 0; ///< highest `allocated` since the last resetPeak()
    std::int64_t peakReserved = 0;
};

/// The allocator counters the memory attribution reads (device_memory.h); the CUDA one reads
/// CUDACachingAllocator::getDeviceStats, tests use a fake.
class AllocatorStats
{
public:
    virtual ~AllocatorStats() = default;
    virtual AllocatorSample sample(int device) = 0;
    virtual void resetPeak(int device) = 0;
};

namespace detail {
/// CUDA events on stage `stage`'s stream of `device` (stage −1: the device's current stream)
/// (cuda_layer.cpp); Unavailable on a CPU-only LibTorch.
Result<std::unique_ptr<ActionTimer>> makeCudaTimer(int device, int stage = -1);
/// The CUDA caching allocator's counters; nullptr on a CPU-only LibTorch.
AllocatorStats* cudaAllocatorStats();
} // namespace detail

} // namespace bs::runtime
