#include "runtime/model/unit_profiler.h"

#include "runtime/model/device_p.h"
#include "runtime/model/device_timer.h"
#include "runtime/model/gpt_modules_p.h"
#include "runtime/model/memory_tracker.h"
#include "runtime/model/torch_devices.h"

#include <torch/torch.h>

#include <algorithm>

namespace bs::runtime {

namespace {

// Allocations of the profiling pass are charged to the last tracker slot: no run is built yet
// (the partition decides its stages) and the slot's bytes are all freed when a unit is done.
constexpr int kProfileSlot = MemoryTracker::kMaxStages - 1;

/// Bytes alive now on `device` for the profiling slot: the CPU tracker's, or CUDA's allocated bytes.
std::int64_t liveBytes(int device)
{
    if (device < 0) {
        return MemoryTracker::stage(kProfileSlot).liveOf(MemoryCategory::Activations);
    }
    AllocatorStats* stats = detail::cudaAllocatorStats();
    return stats ? stats->sample(device).allocated : 0;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0.0 : (n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

/// The module holding exactly layer unit `unit`.
detail::GptStage unitModule(const GptShape& shape, int unit, std::uint64_t seed)
{
    const int L = shape.layers;
    if (unit == 0) {
        return detail::GptStage(shape, 0, 0, true, false, seed, false);
    }
    if (unit <= L) {
        return detail::GptStage(shape, unit - 1, 1, false, false, seed, false);
    }
    if (unit == L + 1) {
        return detail::GptStage(shape, L, 0, false, false, seed, true);
    }
    return detail::GptStage(shape, L, 0, false, true, seed, false);
}

} // namespace

Result<std::vector<UnitCost>> profileLayerUnits(const UnitProfileOptions& o)
{
    const GptShape& shape = o.shape;
    if (shape.layers < 0 || shape.dModel < 1 || shape.heads < 1 || shape.dModel % shape.heads != 0 || shape.seqLen < 1
        || shape.vocab < 2) {
        return makeError(ErrorCode::InvalidArgument, "model shape is invalid (d_model must be a multiple of heads)", "model");
    }
    if (o.microBatchSize < 1 || o.repeats < 1 || o.warmup < 0) {
        return makeError(ErrorCode::InvalidArgument, "micro-batch size and repeats must be >= 1, warm-up >= 0",
                         "pipeline.micro_batch_size");
    }
    if (o.device >= torchCudaDeviceCount() || o.device < -1) {
        return makeError(ErrorCode::Unavailable, "no CUDA device " + std::to_string(o.device) + " for the profiling pass",
                         "device.name");
    }
    auto timer = makeStageTimer(o.device);
    if (!timer) {
        return timer.error();
    }
    MemoryTracker::install();
    std::vector<UnitCost> out;
    try {
        const torch::Device dev = detail::torchDevice(o.device);
        const std::int64_t B = o.microBatchSize, T = shape.seqLen, C = shape.dModel;
        torch::manual_seed(o.seed);
        const torch::Tensor tokens = torch::randint(shape.vocab, {B, T}, torch::TensorOptions().dtype(torch::kLong)).to(dev);
        const torch::Tensor targets = torch::randint(shape.vocab, {B, T}, torch::TensorOptions().dtype(torch::kLong)).to(dev);
        const torch::Tensor hidden = torch::randn({B, T, C}).to(dev);
        for (int unit = 0; unit < layerUnitCount(shape); ++unit) {
            const MemoryScope scope(kProfileSlot, MemoryCategory::Activations);
            detail::GptStage module = unitModule(shape, unit, o.seed);
            module->train();
            module->to(dev);
            UnitCost cost;
            for (const torch::Tensor& p : module->parameters()) {
                const std::int64_t bytes = p.numel() * static_cast<std::int64_t>(p.element_size());
                cost.paramBytes += bytes;
                cost.staticBytes += 4 * bytes; // weights, gradients, AdamW's first and second moments
            }
            std::vector<double> forwardMs, backwardMs;
            for (int pass = 0; pass < o.warmup + o.repeats; ++pass) {
                torch::Tensor x = unit == 0 ? tokens : hidden.detach().requires_grad_(true);
                const std::int64_t before = liveBytes(o.device);
                (*timer)->begin();
                torch::Tensor y;
                {
                    const detail::ComputeScope compute(o.device, o.bf16);
                    y = module->forward(x);
                    if (module->hasHead()) {
                        y = detail::GptStageImpl::loss(y, targets);
                    }
                }
                auto f = (*timer)->end();
                if (!f) {
                    return f.error();
                }
                cost.activationBytes = std::max<std::int64_t>(0, liveBytes(o.device) - before);
                (*timer)->begin();
                if (module->hasHead()) {
                    y.backward();
                } else {
                    y.backward(torch::ones_like(y));
                }
                auto b = (*timer)->end();
                if (!b) {
                    return b.error();
                }
                if (pass >= o.warmup) {
                    forwardMs.push_back(static_cast<double>(*f) / 1e6);
                    backwardMs.push_back(static_cast<double>(*b) / 1e6);
                }
            }
            cost.forwardMs = median(forwardMs);
            cost.backwardMs = median(backwardMs);
            out.push_back(cost);
        }
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("profiling the layer units failed: ") + e.what(), "model");
    }
    MemoryTracker::resetPeaks();
    return out;
}

} // namespace bs::runtime
