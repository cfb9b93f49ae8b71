#include "runtime/train/model/unit_profiler.h"

#include "runtime/train/model/device_p.h"
#include "runtime/train/model/device_timer.h"
#include "runtime/train/model/gpt_modules_p.h"
#include "runtime/train/model/memory_tracker.h"
#include "runtime/train/model/torch_devices.h"

#include <torch/torch.h>

#include <algorithm>
#include <ctime>
#include <numeric>
#include <random>

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

/// CPU time of the whole process (every intra-op thread) around a pass. On a shared machine a
/// wall clock also counts the time the pass waited for a core: at a load of 5 per core a 5 ms pass
/// is almost never run without preemption, and identical blocks measured up to 2x apart. CPU
/// time counts the work only; nothing else runs in the process while the pass profiles.
class ProcessCpuTimer final : public ActionTimer
{
public:
    void begin() override
    {
        m_hostBegin = hostNowNs();
        m_start = now();
    }
    Result<TimeNs> end() override { return now() - m_start; }
    TimeNs hostBegin() const override { return m_hostBegin; }

private:
    static TimeNs now()
    {
        timespec ts{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return static_cast<TimeNs>(ts.tv_sec) * 1'000'000'000 + static_cast<TimeNs>(ts.tv_nsec);
    }
    TimeNs m_start = 0;
    TimeNs m_hostBegin = 0;
};

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
        return makeError(
            ErrorCode::InvalidArgument, "model shape is invalid (d_model must be a multiple of heads)", "model");
    }
    if (o.microBatchSize < 1 || o.repeats < 1 || o.warmup < 0) {
        return makeError(ErrorCode::InvalidArgument, "micro-batch size and repeats must be >= 1, warm-up >= 0",
            "pipeline.micro_batch_size");
    }
    if (o.device >= torchCudaDeviceCount() || o.device < -1) {
        return makeError(ErrorCode::Unavailable,
            "no CUDA device " + std::to_string(o.device) + " for the profiling pass", "device.name");
    }
    // GPU: CUDA events on the stage's stream, as the executor times actions (device_timer.h).
    Result<std::unique_ptr<ActionTimer>> timer =
        o.device < 0 ? std::unique_ptr<ActionTimer>(std::make_unique<ProcessCpuTimer>()) : makeStageTimer(o.device);
    if (!timer) {
        return timer.error();
    }
    MemoryTracker::install();
    const int n = layerUnitCount(shape);
    std::vector<UnitCost> out(static_cast<std::size_t>(n));
    try {
        const MemoryScope scope(kProfileSlot, MemoryCategory::Activations);
        const torch::Device dev = detail::torchDevice(o.device);
        const std::int64_t B = o.microBatchSize, T = shape.seqLen, C = shape.dModel;
        torch::manual_seed(o.seed);
        const torch::Tensor tokens =
            torch::randint(shape.vocab, {B, T}, torch::TensorOptions().dtype(torch::kLong)).to(dev);
        const torch::Tensor targets =
            torch::randint(shape.vocab, {B, T}, torch::TensorOptions().dtype(torch::kLong)).to(dev);
        const torch::Tensor hidden = torch::randn({B, T, C}).to(dev);
        std::vector<detail::GptStage> modules;
        for (int unit = 0; unit < n; ++unit) {
            detail::GptStage module = unitModule(shape, unit, o.seed);
            module->train();
            module->to(dev);
            UnitCost& cost = out[static_cast<std::size_t>(unit)];
            for (const torch::Tensor& p : module->parameters()) {
                const std::int64_t bytes = p.numel() * static_cast<std::int64_t>(p.element_size());
                cost.paramBytes += bytes;
                cost.staticBytes += 4 * bytes; // weights, gradients, AdamW's first and second moments
            }
            modules.push_back(module);
        }
        // Rounds over all units rather than one unit after another: a machine whose speed drifts
        // (shared cores, clocks) then slows every unit alike, and the fastest pass of each unit is
        // kept (noise only ever adds time).
        // The order is shuffled every round: with a fixed order and rounds of equal length, the
        // preemptions of a loaded machine fall on the same units round after round.
        std::vector<std::vector<double>> forwardMs(out.size()), backwardMs(out.size());
        std::vector<int> order(out.size());
        std::iota(order.begin(), order.end(), 0);
        std::mt19937 shuffle(static_cast<std::uint32_t>(o.seed));
        for (int pass = 0; pass < o.warmup + o.repeats; ++pass) {
            std::shuffle(order.begin(), order.end(), shuffle);
            for (const int unit : order) {
                const auto u = static_cast<std::size_t>(unit);
                detail::GptStage& module = modules[u];
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
                out[u].activationBytes = std::max<std::int64_t>(0, liveBytes(o.device) - before);
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
                    forwardMs[u].push_back(static_cast<double>(*f) / 1e6);
                    backwardMs[u].push_back(static_cast<double>(*b) / 1e6);
                }
            }
        }
        for (std::size_t u = 0; u < out.size(); ++u) {
            out[u].forwardMs = *std::min_element(forwardMs[u].begin(), forwardMs[u].end());
            out[u].backwardMs = *std::min_element(backwardMs[u].begin(), backwardMs[u].end());
        }
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("profiling the layer units failed: ") + e.what(), "model");
    }
    MemoryTracker::resetPeaks();
    return out;
}

} // namespace bs::runtime
