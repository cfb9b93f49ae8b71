#include "runtime/sim/simulator.h"

#include "profiler/analysis/analyze.h"
#include "runtime/schedule/catalogue.h"
#include "runtime/sim/cost_model_executor.h"
#include "runtime/sim/scheduler_core.h"

namespace bs::runtime {

profiler::AnalysisOptions analysisOptionsFor(const Schedule& schedule, const CostModel* model,
                                             std::vector<profiler::AnalysisOptions::Segment> laterSettings)
{
    profiler::AnalysisOptions options;
    options.microbatchesPerBatch = schedule.params.microbatches;
    options.synchronous = !schedule.asynchronous;
    options.stashesWeights = schedule.weights == WeightPolicy::Stash || schedule.weights == WeightPolicy::TwoVersions;
    options.laterSettings = std::move(laterSettings);
    if (!model) {
        return options;
    }
    const CostModel& costs = *model;
    for (const StageCost& cost : costs.stages) {
        // Parameters, gradients and AdamW's two moments: four copies of the weights.
        // Recompute: the one micro-batch being recomputed holds its full activations on top.
        options.staticBytes.push_back(costs.bytesKnown ? 4 * cost.paramBytes + cost.recomputeBytes : 0);
        options.paramBytes.push_back(costs.bytesKnown ? cost.paramBytes : 0);
        options.activationBytes.push_back(costs.bytesKnown ? cost.activationBytes : 1);
    }
    return options;
}

profiler::TraceMeta traceMetaFor(const Schedule& schedule)
{
    profiler::TraceMeta meta;
    meta.stages = schedule.stages();
    meta.clock = "virtual";
    const auto& p = schedule.params;
    meta.title = p.name + " p=" + std::to_string(p.stages) + " m=" + std::to_string(p.microbatches)
                 + (findSchedule(p.name) && findSchedule(p.name)->takesAccumWindow() ? " a=" + std::to_string(p.accum) : "");
    meta.attributes["schedule"] = p.name;
    meta.attributes["stages"] = std::to_string(p.stages);
    meta.attributes["microbatches"] = std::to_string(p.microbatches);
    meta.attributes["accum"] = std::to_string(p.accum);
    meta.attributes["batches"] = std::to_string(p.batches);
    meta.attributes["weights"] = std::string(weightPolicyName(schedule.weights));
    return meta;
}

Result<SimulationResult> simulate(const SimulationRequest& request)
{
    ScheduleParams params = request.schedule;
    if (params.commRatio == 0.0 && !request.costs.stages.empty()) {
        // Plan async orders (k > 0) for the comm this cost model will charge.
        const StageCost& first = request.costs.stages.front();
        if (first.forward > 0) {
            params.commRatio = static_cast<double>(request.costs.commTime(first.sendBytes))
                               / static_cast<double>(first.forward);
        }
    }
    auto schedule = makeSchedule(params);
    if (!schedule) {
        return schedule.error();
    }
    return simulateSchedule(std::move(*schedule), request.costs, request.microBatchSize);
}

Result<SimulationResult> simulateSchedule(Schedule schedule, CostModel costs, int microBatchSize)
{
    const auto p = static_cast<std::size_t>(schedule.stages());
    if (costs.stages.size() == 1 && p > 1) {
        costs.stages.assign(p, costs.stages.front());
    }
    if (costs.stages.size() != p) {
        return makeError(ErrorCode::InvalidArgument,
                         "cost model has " + std::to_string(costs.stages.size()) + " stages, schedule has "
                             + std::to_string(p),
                         "give one cost per stage or a single cost for all");
    }
    if (microBatchSize < 1) {
        return makeError(ErrorCode::InvalidArgument, "micro-batch-size must be at least 1", "micro-batch-size: >= 1");
    }
    profiler::TraceStore store(traceMetaFor(schedule));
    CostModelExecutor executor(costs);
    auto stats = drive(schedule, executor, store);
    if (!stats) {
        return stats.error();
    }
    SimulationResult result;
    result.trace = store.snapshot();
    result.report = profiler::analyze(*result.trace, analysisOptionsFor(schedule, &costs));
    const double seconds = toSeconds(result.report.makespan);
    if (seconds > 0) {
        result.throughputSamplesPerSecond = static_cast<double>(schedule.totalMicrobatches()) * microBatchSize / seconds;
    }
    result.schedule = std::move(schedule);
    return result;
}

} // namespace bs::runtime
