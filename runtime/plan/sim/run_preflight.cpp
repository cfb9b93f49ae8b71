#include "runtime/plan/sim/run_preflight.h"

#include "runtime/plan/config/config_validate.h"
#include "runtime/plan/gpu/gpu_probe.h"
#include "runtime/plan/sim/cost_model.h"
#include "runtime/plan/sim/preflight.h"

#include <algorithm>

namespace bs::runtime {

MemoryCapacity probeMemoryCapacity()
{
    MemoryCapacity capacity;
    capacity.hostBytes = availableHostMemoryBytes();
    if (auto gpus = gpu::probeGpus()) {
        for (const gpu::GpuDevice& g : *gpus) {
            if (g.index >= 0) {
                capacity.gpuBytes.resize(std::max(capacity.gpuBytes.size(), static_cast<std::size_t>(g.index) + 1), 0);
                capacity.gpuBytes[static_cast<std::size_t>(g.index)] = g.totalBytes;
            }
        }
    }
    return capacity;
}

Status preflightRun(const RunConfig& config, const MemoryCapacity& capacity, const PreflightScope& scope)
{
    if (scope.reference || !validate(config)) {
        return ok(); // an invalid config gets the validator's message when the session starts
    }
    const int p = config.pipeline.stages;
    const DeviceSpec device = parseDeviceName(config.device.name);
    std::int64_t available = 0;
    int sharing = 0; // 0 = all stages
    std::string where;
    if (!device.cuda) {
        available = capacity.hostBytes;
        sharing = scope.distributed && scope.ranksOnThisHost > 0 ? std::min(scope.ranksOnThisHost, p) : 0;
        where = "host RAM";
    } else if (scope.distributed || device.index >= 0) {
        const int gpu = scope.distributed ? scope.localRank : device.index;
        if (gpu < 0 || static_cast<std::size_t>(gpu) >= capacity.gpuBytes.size()) {
            return ok(); // no such GPU: the device plan names it
        }
        available = capacity.gpuBytes[static_cast<std::size_t>(gpu)];
        sharing = scope.distributed ? 1 : 0;
        where = "cuda:" + std::to_string(gpu) + " memory";
    } else { // "cuda": contiguous blocks over the GPUs
        const int gpus = std::min(static_cast<int>(capacity.gpuBytes.size()), p);
        if (gpus <= 0) {
            return ok();
        }
        available = *std::min_element(capacity.gpuBytes.begin(), capacity.gpuBytes.begin() + gpus);
        sharing = (p + gpus - 1) / gpus;
        where =
            "the memory of each of " + std::to_string(gpus) + " GPUs (" + std::to_string(sharing) + " stages on each)";
    }
    if (available <= 0) {
        return ok();
    }
    auto profile = deviceProfile("cpu"); // the estimate is of memory: the device's speed does not enter it
    if (!profile) {
        return ok();
    }
    GptScenario scenario;
    scenario.schedule = config.schedule.name;
    scenario.stages = p;
    scenario.shape = config.model.shape;
    // What the runtime will keep: bf16 autocast halves the matmul activations; a CUDA run loads the
    // CUDA module (LibTorch 2.x), whose attention is scaled_dot_product_attention (no T x T scores).
    // The CPU module may be LibTorch 1.13 (scores kept): the estimate stays conservative there.
    scenario.shape.activationBytes = effectiveDtype(config) == "bf16" ? 2 : 4;
    scenario.shape.fusedAttention = device.cuda;
    scenario.device = *profile;
    scenario.accum = config.pipeline.microbatches;
    scenario.microBatchSize = config.pipeline.microBatchSize;
    scenario.batches = 1;
    scenario.recompute = config.model.recompute; // recompute_costs.h: inputs only per in-flight micro-batch
    if (config.pipeline.partition == "explicit") {
        scenario.unitsPerStage = config.pipeline.partitionUnits; // the stages hold what the run will put there
    }
    Status fits = checkMemoryFits(scenario, available, sharing);
    if (fits) {
        return ok();
    }
    if (fits.error().context.rfind("pre-flight", 0) != 0) {
        return ok(); // a scenario the simulator cannot model: the run itself will tell
    }
    Error refused = fits.error();
    refused.message += " (" + where + ")";
    return refused;
}

Status preflightStart(const RunConfig& config, const MemoryCapacity& capacity, const PreflightScope& scope)
{
    if (Status valid = validate(config); !valid) {
        return valid;
    }
    return preflightRun(config, capacity, scope);
}

} // namespace bs::runtime
