#pragma once
// Torch-free planning for GPU runs (issue 6, runtime on GPUs): which device each stage runs on,
// which driver runs the stages and how activations move between them. The torch side (moving
// stage modules to devices, NCCL send/recv, caching-allocator statistics) builds on these.

#include "base/result.h"

#include <string>
#include <vector>

namespace bs::runtime::gpu {

/// How the stages are driven on the devices found.
enum class GpuDriver
{
    SerialVirtualTime, ///< one GPU: every stage on it, the serial virtual-time driver, real kernel times
    Threaded, ///< several GPUs: the threaded executor runs the stages concurrently
};

/// How activations and gradients move between stage devices.
enum class GpuTransport
{
    SameDevice, ///< consecutive stages share a device: no copy
    Nccl, ///< NCCL point-to-point on a dedicated stream
    PeerCopy, ///< cudaMemcpyPeerAsync on a dedicated stream (NCCL unavailable)
};

struct GpuPlan
{
    std::vector<int> deviceOfStage; ///< stage -> CUDA device index
    GpuDriver driver = GpuDriver::SerialVirtualTime;
    std::vector<GpuTransport> linkAfterStage; ///< stage s -> s+1 (size stages − 1)
};

/// Stages in contiguous blocks over the devices (stage s on device floor(s·g/p), g = min(gpus,
/// stages)), the serial driver on one device, the threaded one on several. InvalidArgument when
/// stages < 1; Unavailable when gpus < 1.
Result<GpuPlan> planGpuRun(int stages, int gpus, bool ncclAvailable);

std::string_view driverName(GpuDriver driver);
std::string_view transportName(GpuTransport transport);

} // namespace bs::runtime::gpu
