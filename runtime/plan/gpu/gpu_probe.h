#pragma once
// What GPUs and NCCL this process can use. GPUs are listed through the CUDA driver library looked
// up at run time (dlopen libcuda.so.1: nothing linked, so binaries start on machines without a
// driver or toolkit, and the GUI lists devices without LibTorch). Without a GPU: Unavailable with
// the reason.

#include "base/result.h"

#include <cstdint>
#include <functional>
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
/// BS_FAKE_GPUS="NAME:GiB[;NAME:GiB...]" (tests, and rehearsing a GPU workstation on a machine
/// without one) lists those devices instead of asking the driver.
Result<std::vector<GpuDevice>> probeGpus();

/// One entry of the GUI's "Run on": the device.name, what to show, and, when it cannot train
/// here, why (empty = usable).
struct RunDeviceChoice
{
    std::string name;
    std::string label;
    std::string unusable;
};

/// Why CUDA runs cannot start in this program although a GPU is there (the CUDA runtime module is
/// not built or installed), or "" when they can. The program that loads modules registers it
/// (runtime/train/module's cudaModuleMissing()); unregistered, GPUs count as usable.
void setCudaModuleCheck(std::function<std::string()> whyNot);

/// "cpu", then (several GPUs) "cuda" and each "cuda:N" labelled with the GPU's name and memory,
/// unusable with the module check's reason; with no GPU one unusable entry (name "") that says
/// why: no NVIDIA driver, or no device.
std::vector<RunDeviceChoice> runDeviceChoices();

/// The device.name values this machine can run: "cpu", then "cuda" (when several GPUs) and
/// "cuda:N" for each GPU found. What the GUI's device selector lists.
std::vector<std::string> deviceChoices();

/// NCCL's version code (e.g. 22809 for 2.28.9) from libnccl.so.2, or 0 when it cannot be loaded.
int ncclVersionCode();

} // namespace bs::runtime::gpu
