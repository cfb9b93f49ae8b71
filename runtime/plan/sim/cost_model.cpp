#include "runtime/plan/sim/cost_model.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace bs::runtime {

CostModel CostModel::uniform(
    int stages, TimeNs forward, TimeNs backwardInput, TimeNs backwardWeight, TimeNs update, TimeNs comm)
{
    CostModel model;
    StageCost cost;
    cost.forward = forward;
    cost.backwardInput = backwardInput;
    cost.backwardWeight = backwardWeight;
    cost.update = update;
    model.stages.assign(static_cast<std::size_t>(std::max(stages, 1)), cost);
    model.commLatency = comm;
    return model;
}

Result<DeviceProfile> deviceProfile(const std::string& name)
{
    // Provenance, per number (also in `source`, printed by simulate --json and tune):
    // - peakFlops: dense bf16 tensor-core peak WITHOUT sparsity from NVIDIA's data sheets: A100
    //   SXM 312 TFLOPS (A100 data sheet, 2021), H100 SXM 989 TFLOPS (H100 data sheet, 2023: the
    //   1979 figure there is with 2:4 sparsity), H200 SXM 989 TFLOPS (H200 data sheet, 2024: same
    //   GH100 compute as H100). CPU: 2e11 FLOP/s, a round figure for a few AVX2/AVX-512 cores.
    // - memoryBytesPerSecond: HBM bandwidth from the same sheets (A100 80 GB 1.6-2.0 TB/s, we use
    //   the 40 GB part's 1.6; H100 SXM 3.35 TB/s; H200 4.8 TB/s).
    // - linkBytesPerSecond: half of NVLink's per-direction bandwidth for a point-to-point
    //   transfer between two GPUs (A100 NVLink3 300 GB/s -> 200e9 used; H100/H200 NVLink4
    //   450 GB/s -> 400e9 / 450e9), a modelling choice, not a measurement.
    // - maxEfficiency / halfFlops: NOT measured on these GPUs. Rough fits chosen so large GEMMs
    //   reach 55-60 % of peak and a GPT-2-medium layer's kernels run at roughly a third of it
    //   (typical published Megatron-LM MFU of 40-55 % on A100/H100); small kernels are dominated by
    //   launch overhead. Treat predicted times as +-50 %; `tune --calibrate` (and the GUI's
    //   calibration) replace them with the times a real run measured.
    // - linkLatency 10 us, CPU's 5 us: round figures for a NCCL/Gloo point-to-point message.
    const std::string fitted = "; efficiency curve a rough fit, not measured on this GPU: calibrate with a real run";
    if (name == "cpu") {
        return DeviceProfile{"cpu", 2e11, 0.5, 2e7, 2e10, 1e10, 5 * kNsPerUs,
            "round figures for a few x86 cores (2e11 FLOP/s, 20 GB/s); measure with tune --calibrate"};
    }
    if (name == "a100") {
        return DeviceProfile{"a100", 312e12, 0.6, 5e10, 1.6e12, 2e11, 10 * kNsPerUs,
            "NVIDIA A100 data sheet: 312 TFLOPS dense bf16, 1.6 TB/s HBM2e; NVLink3 p2p 200 GB/s" + fitted};
    }
    if (name == "h100") {
        return DeviceProfile{"h100", 989e12, 0.55, 1.5e11, 3.3e12, 4e11, 10 * kNsPerUs,
            "NVIDIA H100 SXM data sheet: 989 TFLOPS dense bf16, 3.35 TB/s HBM3; NVLink4 p2p 400 GB/s" + fitted};
    }
    if (name == "h200") {
        return DeviceProfile{"h200", 989e12, 0.6, 1.5e11, 4.8e12, 4.5e11, 10 * kNsPerUs,
            "NVIDIA H200 SXM data sheet: 989 TFLOPS dense bf16, 4.8 TB/s HBM3e; NVLink4 p2p 450 GB/s" + fitted};
    }
    return makeError(ErrorCode::InvalidArgument, "unknown device profile '" + name + "'",
        "device-profile: allowed values are cpu, a100, h100, h200");
}

std::vector<std::string> deviceProfileNames()
{
    return {"cpu", "a100", "h100", "h200"};
}

namespace {

// t = flops / (peak · eff(flops)) with eff = maxEff · flops / (flops + half): a fixed overhead
// plus a peak-rate term.
TimeNs kernelTime(double flops, const DeviceProfile& device)
{
    if (flops <= 0) {
        return 0;
    }
    return static_cast<TimeNs>(
        std::llround((flops + device.halfFlops) / (device.peakFlops * device.maxEfficiency) * 1e9));
}

} // namespace

namespace {

/// Costs over `part` (stages may be empty when p > layers in the FLOPs split): the embedding on
/// the stage whose units hold unit 0, the head on the one holding the last unit, the final norm on
/// part.finalNormStage.
CostModel costsOver(const GptShape& shape, const StagePartition& part, int microBatch, const DeviceProfile& device)
{
    const std::int64_t hiddenBytes = shape.hiddenBytes(microBatch); // fp32 (B, T, C) crossing a boundary
    const std::int64_t normParams = 2 * static_cast<std::int64_t>(shape.dModel);
    const int headUnit = layerUnitCount(shape) - 1;
    CostModel model;
    model.bytesKnown = true;
    model.commLatency = device.linkLatency;
    model.commBytesPerSecond = device.linkBytesPerSecond;
    int firstUnit = 0;
    for (std::size_t s = 0; s < part.layerCount.size(); ++s) {
        const int units = s < part.unitCount.size() ? part.unitCount[s] : 0;
        const int layers = part.layerCount[s];
        const bool embedding = units > 0 && firstUnit == 0;
        const bool head = units > 0 && firstUnit + units - 1 == headUnit;
        const bool norm = part.finalNormStage == static_cast<int>(s);
        firstUnit += units;
        StageCost cost;
        cost.forward = layers * kernelTime(shape.blockForwardFlops(microBatch), device);
        std::int64_t params = layers * shape.blockParams();
        // Per micro-batch in flight: each block's saved tensors (its input counted), then what the
        // stage's ends keep (runtime/train/exec: the stage's output stays the root of its backward
        // until the gradient comes back).
        std::int64_t activations = layers * shape.blockActivationBytes(microBatch);
        if (embedding) {
            params += shape.embeddingParams();
            activations += shape.embeddingActivationBytes(microBatch);
        } else if (layers == 0 && !norm) {
            activations += hiddenBytes; // a head-only stage: the head's matmul keeps the received input
        }
        if (norm) {
            params += normParams; // headParams() counts the final LayerNorm: the norm unit's here
            activations += shape.finalNormActivationBytes(microBatch, head);
        }
        if (head) {
            cost.forward += kernelTime(shape.headForwardFlops(microBatch), device);
            params += shape.headParams() - normParams;
            activations += shape.headActivationBytes(microBatch); // log-softmax and targets
        } else {
            activations += hiddenBytes; // the output handed on
        }
        cost.workingBytes = shape.backwardWorkingBytes(microBatch, layers > 0, embedding, head);
        // A backward costs two forwards: one for the input gradient, one for the weight gradient.
        cost.backwardInput = cost.forward;
        cost.backwardWeight = cost.forward;
        // AdamW reads and writes parameter, gradient and two moments: 8 fp32 streams per parameter.
        cost.update =
            static_cast<TimeNs>(std::llround(static_cast<double>(params) * 32.0 / device.memoryBytesPerSecond * 1e9));
        cost.paramBytes = params * 4;
        cost.activationBytes = activations;
        cost.sendBytes = hiddenBytes;
        model.stages.push_back(cost);
    }
    return model;
}

} // namespace

Result<CostModel> costModelFromGpt(const GptShape& shape, int stages, int microBatch, const DeviceProfile& device)
{
    if (microBatch < 1) {
        return makeError(ErrorCode::InvalidArgument, "micro-batch-size must be at least 1", "micro-batch-size: >= 1");
    }
    auto partition = partitionLayers(shape, stages, microBatch);
    if (!partition) {
        return partition.error();
    }
    return costsOver(shape, *partition, microBatch, device);
}

Result<CostModel> costModelFromUnits(
    const GptShape& shape, const std::vector<int>& unitsPerStage, int microBatch, const DeviceProfile& device)
{
    if (microBatch < 1) {
        return makeError(ErrorCode::InvalidArgument, "micro-batch-size must be at least 1", "micro-batch-size: >= 1");
    }
    auto partition = partitionFromUnits(shape, static_cast<int>(unitsPerStage.size()), unitsPerStage);
    if (!partition) {
        return partition.error();
    }
    return costsOver(shape, *partition, microBatch, device);
}

Result<CostModel> costModelFromString(const std::string& costs, int stages, double commMs)
{
    std::vector<double> values;
    std::stringstream in(costs);
    std::string item;
    while (std::getline(in, item, ',')) {
        double v = 0;
        const auto* begin = item.data();
        const auto* end = begin + item.size();
        auto [ptr, ec] = std::from_chars(begin, end, v);
        if (ec != std::errc() || ptr != end || !std::isfinite(v)) {
            return makeError(ErrorCode::InvalidArgument, "cost: '" + item + "' is not a number",
                "cost: F,I,W[,U] in milliseconds, e.g. 1,1,1 or 1.5,1.5,1,0.2");
        }
        if (v < 0) {
            return makeError(ErrorCode::InvalidArgument, "cost: negative time " + item,
                "cost: F,I,W[,U] in milliseconds, each >= 0");
        }
        if (v > kMaxActionMs) { // 1e300 ms has no nanosecond count: it used to become 0
            return makeError(ErrorCode::InvalidArgument, "cost: " + item + " ms is past the limit",
                "cost: F,I,W[,U] in milliseconds, each in [0, 1e+06]");
        }
        values.push_back(v);
    }
    if (values.size() < 3 || values.size() > 4) {
        return makeError(ErrorCode::InvalidArgument,
            "cost: expected 3 or 4 values, got " + std::to_string(values.size()),
            "cost: F,I,W[,U] in milliseconds; a full backward B costs I+W");
    }
    if (values[0] + values[1] + values[2] <= 0) {
        return makeError(ErrorCode::InvalidArgument, "cost: F, I and W are all zero",
            "cost: F,I,W[,U] in milliseconds, at least one of F, I, W > 0");
    }
    if (!std::isfinite(commMs) || commMs < 0 || commMs > kMaxActionMs) {
        return makeError(
            ErrorCode::InvalidArgument, "comm: must be a time in [0, 1e+06] milliseconds", "comm: in [0, 1e+06]");
    }
    auto ns = [](double ms) { return static_cast<TimeNs>(std::llround(ms * static_cast<double>(kNsPerMs))); };
    return CostModel::uniform(
        stages, ns(values[0]), ns(values[1]), ns(values[2]), values.size() > 3 ? ns(values[3]) : 0, ns(commMs));
}

} // namespace bs::runtime
