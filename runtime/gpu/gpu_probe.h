#pragma once
// What GPUs and NCCL this process can use, through the CUDA runtime (never the driver API, so
// binaries start on machines without a driver). Without a GPU: Unavailable with the reason.

#include "base/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bs::runtime::gpu {

struct GpuDevice
{
    int index = 0;
    std::string name;
    std::int64_t totalBytes = 0;
    int computeMajor = 0, computeMinor = 0;
};

/// The CUDA devices visible to this process. Unavailable (with cudaGetErrorString's words) when
/// there is no driver or no device, or when the build has no CUDA toolkit.
Result<std::vector<GpuDevice>> probeGpus();

/// NCCL's version code (e.g. 22809 for 2.28.9), or 0 when NCCL is not in this build.
int ncclVersionCode();

} // namespace bs::runtime::gpu
