#include "runtime/train/exec/device_plan.h"

#include "runtime/plan/gpu/gpu_placement.h"
#include "runtime/plan/schedule/catalogue.h"

#include <set>

namespace bs::runtime {

std::string noCudaMessage(const std::string& deviceName, bool torchHasCuda)
{
    if (!torchHasCuda) {
        return "device '" + deviceName
            + "': this LibTorch build is CPU-only (no CUDA); train with --device cpu (device.name = \"cpu\"), or build "
              "against a CUDA LibTorch (PyPI's torch wheel: bash packaging/install-torch.sh --cmake)";
    }
    return "device '" + deviceName
        + "': no CUDA device is present (LibTorch has CUDA but sees 0 GPUs); train with --device cpu "
          "(device.name = \"cpu\") or run on a machine with an NVIDIA GPU and driver";
}

Result<DevicePlan> planDevices(const RunConfig& config, int stages, bool torchHasCuda, int cudaDevices)
{
    DevicePlan plan;
    plan.bf16 = effectiveDtype(config) == "bf16";
    const DeviceSpec spec = parseDeviceName(config.device.name);
    if (!spec.cuda) {
        plan.stageDevice.assign(static_cast<std::size_t>(std::max(stages, 0)), -1);
        plan.description = "cpu";
        return plan;
    }
    if (!torchHasCuda || cudaDevices <= 0) {
        return makeError(ErrorCode::InvalidArgument, noCudaMessage(config.device.name, torchHasCuda), "device.name");
    }
    if (spec.index >= cudaDevices) {
        return makeError(ErrorCode::InvalidArgument,
            "device.name = \"" + config.device.name + "\" but this machine has " + std::to_string(cudaDevices)
                + " CUDA device(s); allowed: \"cpu\", \"cuda\", \"cuda:0\".."
                + "\"cuda:" + std::to_string(cudaDevices - 1) + "\"",
            "device.name");
    }
    plan.cuda = true;
    if (spec.index >= 0 || cudaDevices == 1 || stages == 1) {
        const int device = std::max(spec.index, 0);
        plan.stageDevice.assign(static_cast<std::size_t>(stages), device);
        plan.devicesUsed = 1;
        plan.description = "cuda:" + std::to_string(device) + " (" + std::to_string(stages) + " stage"
            + (stages == 1 ? "" : "s") + ")";
        return plan;
    }
    // Interleaved and V placements: the ranks are placed, and each model stage goes where its rank goes.
    const int v = stages > config.pipeline.stages && stages == modelStages(config) ? stagesPerRankOf(config) : 1;
    auto gpuPlan = gpu::planGpuRun(stages / v, cudaDevices, true);
    if (!gpuPlan) {
        return gpuPlan.error();
    }
    plan.stageDevice = gpuPlan->deviceOfStage;
    if (v > 1) {
        const std::vector<int> rankOf = rankOfStageFor(findSchedule(config.schedule.name)->placement, stages / v, v);
        plan.stageDevice.clear();
        for (int r : rankOf) {
            plan.stageDevice.push_back(gpuPlan->deviceOfStage[static_cast<std::size_t>(r)]);
        }
        const std::set<int> used(plan.stageDevice.begin(), plan.stageDevice.end());
        plan.devicesUsed = static_cast<int>(used.size());
        plan.description = "cuda:0-" + std::to_string(*used.rbegin()) + " (" + std::to_string(stages / v) + " ranks x "
            + std::to_string(v) + " stages, each on its rank's device)";
        return plan;
    }
    const std::set<int> used(plan.stageDevice.begin(), plan.stageDevice.end());
    plan.devicesUsed = static_cast<int>(used.size());
    plan.description = "cuda:0-" + std::to_string(*used.rbegin()) + " (stages";
    for (int s = 0; s < stages; ++s) {
        const bool first = s == 0
            || plan.stageDevice[static_cast<std::size_t>(s)] != plan.stageDevice[static_cast<std::size_t>(s - 1)];
        plan.description += (first ? (s == 0 ? " " : " | ") + std::to_string(s) : std::string());
        const bool last = s + 1 == stages
            || plan.stageDevice[static_cast<std::size_t>(s + 1)] != plan.stageDevice[static_cast<std::size_t>(s)];
        if (last && !first) {
            plan.description += "-" + std::to_string(s);
        }
    }
    plan.description += ")";
    return plan;
}

} // namespace bs::runtime
