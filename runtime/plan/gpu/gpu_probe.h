#pragma once
// What GPUs and NCCL this process can use. GPUs are listed through the CUDA driver library looked
// up at run time (dlopen libcuda.so.1: nothing linked, so binaries start on machines without a
// driver or toolkit, and the GUI lists devices without LibTorch). Without a GPU: Unavailable with
// the reason.

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

/// The CUDA devices visible to this process (CUDA_VISIBLE_DEVICES applies). Unavailable, with
/// "no CUDA GPU available (reason)", when there is no driver or no device.
Result<std::vector<GpuDevice>> probeGpus();

/// The device.name values this machine can run: "cpu", then "cuda" (when several GPUs) and
/// "cuda:N" for each GPU found. What the GUI's device selector lists.
std::vector<std::string> deviceChoices();

/// NCCL's version code (e.g. 22809 for 2.28.9) from libnccl.so.2, or 0 when it cannot be loaded.
int ncclVersionCode();

} // namespace bs::runtime::gpu
