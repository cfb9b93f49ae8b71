#include "runtime/sim/measured_costs.h"

#include <array>
#include <cmath>
#include <string>

namespace bs::runtime {

namespace {

using profiler::EventKind;

struct Sum
{
    TimeNs total = 0;
    std::int64_t count = 0;

    TimeNs mean() const { return count > 0 ? total / count : 0; }
};

constexpr std::size_t kindIndex(EventKind kind)
{
    return static_cast<std::size_t>(kind);
}

TimeNs scaled(TimeNs t, double factor)
{
    return static_cast<TimeNs>(std::llround(static_cast<double>(t) * factor));
}

} // namespace

Result<MeasuredCosts> measuredCosts(const profiler::TraceSnapshot& trace, int stages)
{
    if (stages <= 0) {
        stages = trace.meta().stages;
    }
    if (trace.empty()) {
        return makeError(ErrorCode::InvalidArgument, "the trace has no events to measure costs from", "trace");
    }
    if (stages <= 0) {
        return makeError(ErrorCode::InvalidArgument, "the trace does not say how many stages it has", "trace.meta.stages");
    }
    const auto count = static_cast<std::size_t>(stages);
    std::vector<std::array<Sum, profiler::kEventKindCount>> sums(count);
    Sum send;
    std::size_t badStage = count;
    trace.forEach([&](const profiler::TraceEvent& e) {
        if (e.stage >= count) {
            badStage = e.stage;
            return;
        }
        if (e.kind == EventKind::Send) {
            send.total += e.duration();
            ++send.count;
            return;
        }
        if (!e.isCompute() || e.kind == EventKind::Marker || e.kind == EventKind::Kernel) {
            return;
        }
        Sum& s = sums[e.stage][kindIndex(e.kind)];
        s.total += e.duration();
        ++s.count;
    });
    if (badStage != count) {
        return makeError(ErrorCode::InvalidArgument,
            "the trace has events on stage " + std::to_string(badStage) + " but only " + std::to_string(stages)
                + " stages",
            "trace");
    }
    MeasuredCosts out;
    out.stages.resize(count);
    out.computeEvents.resize(count);
    for (std::size_t s = 0; s < count; ++s) {
        const auto& k = sums[s];
        const Sum& f = k[kindIndex(EventKind::Forward)];
        const Sum& b = k[kindIndex(EventKind::Backward)];
        const Sum& i = k[kindIndex(EventKind::BackwardInput)];
        const Sum& w = k[kindIndex(EventKind::BackwardWeight)];
        const Sum& u = k[kindIndex(EventKind::Update)];
        if (f.count == 0 || (b.count == 0 && i.count == 0)) {
            return makeError(ErrorCode::InvalidArgument,
                "stage " + std::to_string(s) + " has no forward or no backward recorded yet", "trace");
        }
        StageCost& cost = out.stages[s];
        cost.forward = f.mean();
        if (i.count > 0 && w.count > 0) {
            cost.backwardInput = i.mean();
            cost.backwardWeight = w.mean();
        } else if (b.count > 0) {
            cost.backwardInput = b.mean() / 2;
            cost.backwardWeight = b.mean() - cost.backwardInput;
        } else { // I without W: the weight gradient was never recorded separately
            cost.backwardInput = i.mean();
        }
        cost.update = u.mean();
        out.computeEvents[s] = f.count + b.count + i.count + w.count + u.count;
    }
    out.commMeasured = send.count > 0;
    out.comm = send.mean();
    return out;
}

CostModel withMeasuredTimes(CostModel model, const MeasuredCosts& measured, double computeScale)
{
    if (measured.stages.empty()) {
        return model;
    }
    if (model.stages.empty()) {
        model.stages.resize(measured.stages.size());
    }
    const bool sameStages = model.stages.size() == measured.stages.size();
    StageCost total;
    for (const auto& s : measured.stages) {
        total.forward += s.forward;
        total.backwardInput += s.backwardInput;
        total.backwardWeight += s.backwardWeight;
        total.update += s.update;
    }
    const double share = 1.0 / static_cast<double>(model.stages.size());
    for (std::size_t s = 0; s < model.stages.size(); ++s) {
        StageCost& cost = model.stages[s];
        const StageCost& from = sameStages ? measured.stages[s] : total;
        const double factor = sameStages ? computeScale : computeScale * share;
        cost.forward = scaled(from.forward, factor);
        cost.backwardInput = scaled(from.backwardInput, factor);
        cost.backwardWeight = scaled(from.backwardWeight, factor);
        cost.update = sameStages ? from.update : scaled(from.update, share);
    }
    model.commLatency = measured.comm;
    model.commBytesPerSecond = 0;
    return model;
}

} // namespace bs::runtime
