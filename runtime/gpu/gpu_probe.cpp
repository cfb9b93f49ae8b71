#include "runtime/gpu/gpu_probe.h"

#ifdef BS_HAVE_CUDART
#include <cuda_runtime_api.h>
#endif
#ifdef BS_HAVE_NCCL
#include <nccl.h>
#endif

namespace bs::runtime::gpu {

Result<std::vector<GpuDevice>> probeGpus()
{
#ifdef BS_HAVE_CUDART
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        return makeError(ErrorCode::Unavailable, std::string("no CUDA GPU available (") + cudaGetErrorString(status) + ")",
                         "cudaGetDeviceCount -> " + std::to_string(static_cast<int>(status)));
    }
    if (count == 0) {
        return makeError(ErrorCode::Unavailable, "no CUDA GPU available (0 devices)");
    }
    std::vector<GpuDevice> devices;
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
            continue;
        }
        devices.push_back({i, prop.name, static_cast<std::int64_t>(prop.totalGlobalMem), prop.major, prop.minor});
    }
    return devices;
#else
    return makeError(ErrorCode::Unavailable, "CUDA not available in this build (configured without the CUDA toolkit)");
#endif
}

int ncclVersionCode()
{
#ifdef BS_HAVE_NCCL
    int version = 0;
    return ncclGetVersion(&version) == ncclSuccess ? version : 0;
#else
    return 0;
#endif
}

} // namespace bs::runtime::gpu
