#include "runtime/plan/sim/measured_costs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace bs::runtime {

namespace {

using profiler::EventKind;

// The first action of a kind on a stage (earliest start) is kept apart: it pays the process's
// one-time costs (ColdCost), the others are the stage's steady time.
struct Sum
{
    TimeNs total = 0;
    std::int64_t count = 0;
    TimeNs firstStart = 0;
    TimeNs first = 0; ///< duration of the earliest-starting action

    void add(const profiler::TraceEvent& e)
    {
        if (count == 0 || e.start < firstStart) {
            firstStart = e.start;
            first = e.duration();
        }
        total += e.duration();
        ++count;
    }
    bool separate = true; ///< FirstActions::StartUp: the first is kept out of the mean

    /// Mean of all but the first (the first alone when it is the only one).
    TimeNs mean() const
    {
        if (!separate) {
            return count > 0 ? total / count : 0;
        }
        return count > 1 ? (total - first) / (count - 1) : count == 1 ? first : 0;
    }
    /// What the first took beyond the steady mean (never negative: a fast first is noise).
    TimeNs coldExtra() const { return separate && count > 1 ? std::max<TimeNs>(0, first - mean()) : 0; }
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

Result<MeasuredCosts> measuredCosts(const profiler::TraceSnapshot& trace, int stages, FirstActions first)
{
    if (stages <= 0) {
        stages = trace.meta().stages;
    }
    if (trace.empty()) {
        return makeError(ErrorCode::InvalidArgument, "the trace has no events to measure costs from", "trace");
    }
    if (stages <= 0) {
        return makeError(
            ErrorCode::InvalidArgument, "the trace does not say how many stages it has", "trace.meta.stages");
    }
    const auto count = static_cast<std::size_t>(stages);
    std::vector<std::array<Sum, profiler::kEventKindCount>> sums(count);
    for (auto& kinds : sums) {
        for (Sum& s : kinds) {
            s.separate = first == FirstActions::StartUp;
        }
    }
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
        sums[e.stage][kindIndex(e.kind)].add(e);
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
        cost.cold.forward = f.coldExtra();
        if (i.count > 0 && w.count > 0) {
            cost.backwardInput = i.mean();
            cost.backwardWeight = w.mean();
            cost.cold.backwardInput = i.coldExtra();
            cost.cold.backwardWeight = w.coldExtra();
        } else if (b.count > 0) {
            cost.backwardInput = b.mean() / 2;
            cost.backwardWeight = b.mean() - cost.backwardInput;
            cost.cold.backwardInput = b.coldExtra() / 2;
            cost.cold.backwardWeight = b.coldExtra() - cost.cold.backwardInput;
        } else { // I without W: the weight gradient was never recorded separately
            cost.backwardInput = i.mean();
            cost.cold.backwardInput = i.coldExtra();
        }
        cost.update = u.mean();
        cost.cold.update = u.coldExtra();
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
        total.cold.forward += s.cold.forward;
        total.cold.backwardInput += s.cold.backwardInput;
        total.cold.backwardWeight += s.cold.backwardWeight;
        total.cold.update += s.cold.update;
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
        // One-time costs do not scale with the micro-batch (they are per call, not per sample).
        cost.cold.forward = sameStages ? from.cold.forward : scaled(from.cold.forward, share);
        cost.cold.backwardInput = sameStages ? from.cold.backwardInput : scaled(from.cold.backwardInput, share);
        cost.cold.backwardWeight = sameStages ? from.cold.backwardWeight : scaled(from.cold.backwardWeight, share);
        cost.cold.update = sameStages ? from.cold.update : scaled(from.cold.update, share);
    }
    model.commLatency = measured.comm;
    model.commBytesPerSecond = 0;
    return model;
}

} // namespace bs::runtime
