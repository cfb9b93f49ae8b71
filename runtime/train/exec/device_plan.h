#pragma once
// Where a run's stages live, decided before anything is built: from device.name, what the linked
// LibTorch can do and how many CUDA devices it sees. Pure (the probe results are arguments), so
// every branch, error message included, is tested on a machine without a GPU.
//
//   cpu      every stage on the CPU
//   cuda:N   every stage on GPU N (one GPU: the serial virtual-time driver shows what p GPUs do)
//   cuda     one GPU: as cuda:0; several: stages in contiguous blocks (runtime/plan/gpu's planner),
//            consecutive stages on one device where possible; the threaded executor runs them
//            concurrently (one thread per stage, the stages of one device taking turns)
//
// Errors (InvalidArgument, context "device.name": the CLI exits 2): a CUDA device asked of a
// CPU-only LibTorch; no CUDA device present; cuda:N beyond the devices present.

#include "base/result.h"
#include "runtime/plan/config/run_config.h"

#include <string>
#include <vector>

namespace bs::runtime {

struct DevicePlan
{
    std::vector<int> stageDevice; ///< per stage: CUDA device index, −1 = CPU
    bool cuda = false; ///< any stage on a GPU
    int devicesUsed = 0; ///< distinct CUDA devices (0 on the CPU)
    bool bf16 = false; ///< effectiveDtype(config) == "bf16"
    std::string description; ///< "cpu", "cuda:0 (8 stages)", "cuda:0-1 (stages 0-3 | 4-7)"
};

/// `torchHasCuda`: the linked LibTorch was built with CUDA; `cudaDevices`: devices it sees.
/// `stages` is the number of stage slots (pipeline.stages; 1 for the reference trainer).
Result<DevicePlan> planDevices(const RunConfig& config, int stages, bool torchHasCuda, int cudaDevices);

/// The one-line answer for a CUDA device that cannot be used here (exposed for the CLI's tests).
std::string noCudaMessage(const std::string& deviceName, bool torchHasCuda);

} // namespace bs::runtime
