#include "runtime/plan/sim/simulator.h"

#include "profiler/analysis/analyze.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/validate.h"
#include "runtime/plan/sim/cost_model_executor.h"
#include "runtime/plan/sim/scheduler_core.h"
#include "runtime/plan/sim/steady_state.h"

#include <algorithm>
#include <optional>

namespace bs::runtime {

profiler::AnalysisOptions analysisOptionsFor(
    const Schedule& schedule, const CostModel* model, std::vector<profiler::AnalysisOptions::Segment> laterSettings)
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
    if (costs.stages.size() == static_cast<std::size_t>(schedule.stages()) && !schedule.onePerRank()) {
        // The trace has one lane per rank: a rank holds the weights of all its chunks.
        const auto ranks = static_cast<std::size_t>(schedule.ranks());
        options.staticBytes.assign(ranks, 0);
        options.paramBytes.assign(ranks, 0);
        options.activationBytes.assign(ranks, 1);
        std::vector<std::int64_t> workingOfRank(ranks, 0);
        for (int s = 0; s < schedule.stages(); ++s) {
            const StageCost& cost = costs.stages[static_cast<std::size_t>(s)];
            const auto r = static_cast<std::size_t>(schedule.rankOf(s));
            options.staticBytes[r] += costs.bytesKnown ? 4 * cost.paramBytes : 0;
            // One action at a time on a rank: the largest of its chunks' backward working sets.
            workingOfRank[r] = std::max(workingOfRank[r], costs.bytesKnown ? cost.workingBytes : 0);
            options.paramBytes[r] += costs.bytesKnown ? cost.paramBytes : 0;
            options.activationBytes[r] = costs.bytesKnown ? cost.activationBytes : 1;
        }
        for (std::size_t r = 0; r < ranks; ++r) {
            options.staticBytes[r] += workingOfRank[r];
        }
        return options;
    }
    for (const StageCost& cost : costs.stages) {
        // Parameters, gradients and AdamW's two moments: four copies of the weights.
        // Recompute: the one micro-batch being recomputed holds its full activations on top.
        // And the backward's working set (StageCost::workingBytes), held only while an action runs.
        options.staticBytes.push_back(
            costs.bytesKnown ? 4 * cost.paramBytes + cost.recomputeBytes + cost.workingBytes : 0);
        options.paramBytes.push_back(costs.bytesKnown ? cost.paramBytes : 0);
        options.activationBytes.push_back(costs.bytesKnown ? cost.activationBytes : 1);
    }
    return options;
}

profiler::TraceMeta traceMetaFor(const Schedule& schedule)
{
    profiler::TraceMeta meta;
    meta.stages = schedule.ranks(); // one timeline lane per rank, whatever it holds
    meta.clock = "virtual";
    const auto& p = schedule.params;
    meta.title = p.name + " p=" + std::to_string(p.stages) + " m=" + std::to_string(p.microbatches)
        + (findSchedule(p.name) && findSchedule(p.name)->takesAccumWindow() ? " a=" + std::to_string(p.accum) : "")
        + (schedule.onePerRank() ? "" : " v=" + std::to_string(schedule.stagesPerRank()));
    if (!schedule.onePerRank()) {
        meta.stagesPerLane = schedule.stagesPerRank();
        meta.attributes["placement"] = std::string(placementName(schedule.placement));
    }
    meta.attributes["schedule"] = p.name;
    meta.attributes["stages"] = std::to_string(p.stages);
    meta.attributes["microbatches"] = std::to_string(p.microbatches);
    meta.attributes["accum"] = std::to_string(p.accum);
    meta.attributes["batches"] = std::to_string(p.batches);
    meta.attributes["weights"] = std::string(weightPolicyName(schedule.weights));
    return meta;
}

namespace {

StageCost chunkCost(const StageCost& rank, int v)
{
    StageCost c = rank;
    c.forward /= v;
    c.backwardInput /= v;
    c.backwardWeight /= v;
    c.update /= v;
    c.forwardBackward /= v;
    c.cold.forward /= v; // each chunk's first actions pay its share of the rank's start-up
    c.cold.backwardInput /= v;
    c.cold.backwardWeight /= v;
    c.cold.update /= v;
    c.activationBytes = std::max<std::int64_t>(1, rank.activationBytes / v);
    c.paramBytes /= v; // sendBytes stays: the hidden state between chunks is the same size
    return c;
}

Result<CostModel> costsPerStage(const Schedule& schedule, CostModel costs)
{
    const auto stages = static_cast<std::size_t>(schedule.stages());
    const auto ranks = static_cast<std::size_t>(schedule.ranks());
    const int v = schedule.stagesPerRank();
    if (costs.stages.size() == stages && (v == 1 || stages != ranks)) {
        return costs; // one cost per stage (chunk)
    }
    if (costs.stages.size() == 1 || costs.stages.size() == ranks) {
        // A cost per rank (or one for all): a rank's layers split evenly over its v chunks.
        std::vector<StageCost> perStage(stages);
        for (std::size_t s = 0; s < stages; ++s) {
            const StageCost& rank =
                costs.stages[costs.stages.size() == 1 ? 0
                                                      : static_cast<std::size_t>(schedule.rankOf(static_cast<int>(s)))];
            perStage[s] = v == 1 ? rank : chunkCost(rank, v);
        }
        costs.stages = std::move(perStage);
        return costs;
    }
    return makeError(ErrorCode::InvalidArgument,
        "cost model has " + std::to_string(costs.stages.size()) + " stages, schedule has " + std::to_string(ranks)
            + " ranks of " + std::to_string(v) + " stages",
        "give one cost per rank, one per stage, or a single cost for all");
}

} // namespace

namespace {

// Sequences per virtual second over the run's makespan.
double throughputOf(const Schedule& schedule, const profiler::Report& report, int microBatchSize)
{
    const double seconds = toSeconds(report.makespan);
    return seconds > 0 ? static_cast<double>(schedule.totalMicrobatches()) * microBatchSize / seconds : 0.0;
}

// The simulation of `schedule` (which the caller keeps): drive and analyse. The scheduler core
// checks each action's stage and micro-batch before it indexes by them (an action that names
// one out of bounds ends the drive with checkIndices()'s error).
Result<SimulationResult> simulateOn(const Schedule& schedule, CostModel input, int microBatchSize)
{
    auto perStage = costsPerStage(schedule, std::move(input));
    if (!perStage) {
        return perStage.error();
    }
    CostModel costs = std::move(*perStage);
    if (microBatchSize < 1) {
        return makeError(ErrorCode::InvalidArgument, "micro-batch-size must be at least 1", "micro-batch-size: >= 1");
    }
    profiler::TraceStore store(traceMetaFor(schedule));
    CostModelExecutor executor(costs);
    DriveOptions options;
    options.appendBatch = 1024; // nobody reads the store before drive() returns
    auto stats = drive(schedule, executor, store, options);
    if (!stats) {
        return stats.error();
    }
    SimulationResult result;
    result.trace = store.snapshot();
    result.report = profiler::analyze(*result.trace, analysisOptionsFor(schedule, &costs));
    result.throughputSamplesPerSecond = throughputOf(schedule, result.report, microBatchSize);
    return result;
}

} // namespace

Result<SimulationResult> simulateSchedule(Schedule schedule, CostModel costs, int microBatchSize)
{
    auto result = simulateOn(schedule, std::move(costs), microBatchSize);
    if (result) {
        result->schedule = std::move(schedule);
    }
    return result;
}

namespace {

// simulate()'s own path: a schedule the catalogue generated, validated before its simulation
// (validate() rejects whatever the scheduler core would find out of bounds, so no misfit's
// error is returned unexplained).
Result<SimulationResult> simulateGenerated(Schedule schedule, CostModel costs, int microBatchSize)
{
    if (Status valid = validate(schedule); !valid) {
        return generatedScheduleInvalid(schedule, valid.error());
    }
    auto result = simulateOn(schedule, std::move(costs), microBatchSize);
    if (result) {
        result->schedule = std::move(schedule);
    }
    return result;
}

} // namespace

namespace {

// simulate() of `params` from its steady state (steady_state.h): three short runs at K, K + 1 and
// K + 2 batches, the rule read off the first two checked on the third, the last two extended to
// params.batches. K doubles from kSettleBatches while the short runs together stay within the N
// batches they replace (a schedule whose warm-up is longer than four batches, PACI's smallest
// windows at p = 8, settles at 8 or 16). nullopt where no K settled: the caller runs N plainly.
std::optional<SimulationResult> fromSteadyState(ScheduleParams params, const SimulationRequest& request)
{
    const int batches = params.batches;
    long spent = 0;
    for (int settle = kSettleBatches; settle + 2 < batches; settle *= 2) {
        spent += 3L * settle + 3;
        if (settle > kSettleBatches && spent > batches) {
            return std::nullopt;
        }
        std::vector<SimulationResult> runs;
        for (int k = 0; k < 3; ++k) {
            params.batches = settle + k;
            auto schedule = generateUnvalidated(params);
            if (!schedule) {
                return std::nullopt;
            }
            auto run = simulateGenerated(std::move(*schedule), request.costs, request.microBatchSize);
            if (!run) {
                return std::nullopt;
            }
            runs.push_back(std::move(*run));
        }
        const auto predicted = extendReport(runs[0].report, runs[1].report, 1);
        if (!predicted || !sameReport(*predicted, runs[2].report)) {
            continue; // not settled yet: try a longer warm-up
        }
        auto extended = extendReport(runs[1].report, runs[2].report, batches - settle - 2, /*spans=*/false);
        if (!extended) {
            return std::nullopt;
        }
        SimulationResult result = std::move(runs[2]);
        result.steadyBatchPeriodNs = result.report.makespan - runs[1].report.makespan;
        result.steadyBatchIdleNs = result.report.totalIdle - runs[1].report.totalIdle;
        result.settledAtBatches = settle;
        result.report = std::move(*extended);
        result.schedule.params.batches = batches;
        result.throughputSamplesPerSecond = throughputOf(result.schedule, result.report, request.microBatchSize);
        return result;
    }
    return std::nullopt;
}

} // namespace

Result<SimulationResult> simulate(const SimulationRequest& request)
{
    ScheduleParams params = request.schedule;
    if (params.commRatio == 0.0 && !request.costs.stages.empty()) {
        // Plan async orders (k > 0) for the comm this cost model will charge.
        const StageCost& first = request.costs.stages.front();
        if (first.forward > 0) {
            params.commRatio =
                static_cast<double>(request.costs.commTime(first.sendBytes)) / static_cast<double>(first.forward);
        }
    }
    if (request.figuresOnly && params.batches > kSettleBatches + 2) {
        if (auto status = checkScheduleParams(params); !status) {
            return status.error();
        }
        if (auto result = fromSteadyState(params, request)) {
            return std::move(*result);
        }
    }
    auto schedule = generateUnvalidated(params);
    if (!schedule) {
        return schedule.error();
    }
    return simulateGenerated(std::move(*schedule), request.costs, request.microBatchSize);
}

} // namespace bs::runtime
