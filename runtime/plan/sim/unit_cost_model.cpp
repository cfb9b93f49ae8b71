// Stage costs from measured layer units (unit_cost_model.h).
#include "runtime/plan/sim/unit_cost_model.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace bs::runtime {

namespace {

TimeNs nsOf(double ms)
{
    return static_cast<TimeNs>(std::llround(std::max(ms, 0.0) * static_cast<double>(kNsPerMs)));
}

} // namespace

Result<CostModel> costModelFromUnitCosts(const GptShape& shape, const std::vector<UnitCost>& units,
    int measuredMicroBatch, const std::vector<int>& unitsPerStage, int microBatch, const DeviceProfile& device)
{
    if (microBatch < 1 || measuredMicroBatch < 1) {
        return makeError(ErrorCode::InvalidArgument, "micro-batch-size must be at least 1", "micro-batch-size: >= 1");
    }
    if (static_cast<int>(units.size()) != layerUnitCount(shape)) {
        return makeError(ErrorCode::InvalidArgument,
            "unit costs for " + std::to_string(units.size()) + " layer units; the model has "
                + std::to_string(layerUnitCount(shape)) + " (model.layers + 3)",
            "unit_costs");
    }
    for (const UnitCost& u : units) {
        if (!std::isfinite(u.forwardMs) || !std::isfinite(u.backwardMs) || u.forwardMs < 0 || u.backwardMs < 0
            || u.forwardMs > kMaxActionMs || u.backwardMs > kMaxActionMs || u.paramBytes < 0 || u.activationBytes < 0) {
            return makeError(ErrorCode::InvalidArgument,
                "a layer unit's cost is negative, not finite or past the limit",
                "unit_costs: forward_ms and backward_ms in [0, 1e+06], bytes >= 0");
        }
    }
    auto part = partitionFromUnits(shape, static_cast<int>(unitsPerStage.size()), unitsPerStage);
    if (!part) {
        return part.error();
    }
    const std::vector<UnitCost> scaled = unitCostsAt(units, measuredMicroBatch, microBatch);
    const std::int64_t hiddenBytes = static_cast<std::int64_t>(shape.seqLen) * microBatch * shape.dModel * 4;
    CostModel model;
    model.bytesKnown = true;
    model.commLatency = device.linkLatency;
    model.commBytesPerSecond = device.linkBytesPerSecond;
    std::size_t unit = 0;
    for (int count : unitsPerStage) {
        double forwardMs = 0.0, backwardMs = 0.0;
        std::int64_t params = 0;
        std::int64_t activations = 0;
        for (int i = 0; i < count; ++i, ++unit) {
            forwardMs += scaled[unit].forwardMs;
            backwardMs += scaled[unit].backwardMs;
            params += scaled[unit].paramBytes;
            activations += scaled[unit].activationBytes;
        }
        StageCost cost;
        cost.forward = nsOf(forwardMs);
        const TimeNs backward = nsOf(backwardMs);
        cost.backwardInput = backward / 2;
        cost.backwardWeight = backward - backward / 2; // I + W is exactly the measured backward
        // AdamW reads and writes parameter, gradient and two moments: 8 streams of the weights' size.
        cost.update =
            static_cast<TimeNs>(std::llround(static_cast<double>(params) * 8.0 / device.memoryBytesPerSecond * 1e9));
        cost.paramBytes = params;
        cost.activationBytes = std::max<std::int64_t>(1, activations);
        cost.sendBytes = hiddenBytes;
        model.stages.push_back(cost);
    }
    return model;
}

} // namespace bs::runtime
