#include "runtime/plan/gpu/gpu_placement.h"

#include <algorithm>
#include <cstdint>

namespace bs::runtime::gpu {

Result<GpuPlan> planGpuRun(int stages, int gpus, bool ncclAvailable)
{
    if (stages < 1) {
        return makeError(
            ErrorCode::InvalidArgument, "a pipeline needs at least one stage", "stages " + std::to_string(stages));
    }
    if (gpus < 1) {
        return makeError(ErrorCode::Unavailable, "no CUDA GPU to place the stages on", "gpus " + std::to_string(gpus));
    }
    GpuPlan plan;
    // Contiguous blocks: stage s on device floor(s·g/p) with g = min(gpus, stages). Neighbouring
    // stages share a device where they can, so only g − 1 links cross devices (round-robin would
    // make every link a transfer); blocks differ in size by at most one stage.
    const int used = std::min(gpus, stages);
    for (int s = 0; s < stages; ++s) {
        plan.deviceOfStage.push_back(static_cast<int>(static_cast<std::int64_t>(s) * used / stages));
    }
    plan.driver = used == 1 ? GpuDriver::SerialVirtualTime : GpuDriver::Threaded;
    for (int s = 0; s + 1 < stages; ++s) {
        const bool same =
            plan.deviceOfStage[static_cast<std::size_t>(s)] == plan.deviceOfStage[static_cast<std::size_t>(s + 1)];
        plan.linkAfterStage.push_back(same ? GpuTransport::SameDevice
                : ncclAvailable            ? GpuTransport::Nccl
                                           : GpuTransport::PeerCopy);
    }
    return plan;
}

std::string_view driverName(GpuDriver driver)
{
    switch (driver) {
    case GpuDriver::SerialVirtualTime:
        return "serial";
    case GpuDriver::Threaded:
        return "threaded";
    }
    return "unknown";
}

std::string_view transportName(GpuTransport transport)
{
    switch (transport) {
    case GpuTransport::SameDevice:
        return "same-device";
    case GpuTransport::Nccl:
        return "nccl";
    case GpuTransport::PeerCopy:
        return "peer-copy";
    }
    return "unknown";
}

} // namespace bs::runtime::gpu
