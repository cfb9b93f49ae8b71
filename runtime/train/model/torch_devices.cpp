#include "runtime/train/model/torch_devices.h"

#include <torch/cuda.h>
#include <torch/version.h>

namespace bs::runtime {

bool torchHasCuda()
{
#ifdef BS_TORCH_HAS_CUDA
    return true;
#else
    return false;
#endif
}

int torchCudaDeviceCount()
{
    try {
        return static_cast<int>(torch::cuda::device_count());
    } catch (const std::exception&) {
        return 0; // a driver that fails to initialise counts as none
    }
}

std::string torchVersion()
{
    return TORCH_VERSION;
}

} // namespace bs::runtime
