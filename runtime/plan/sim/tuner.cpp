#include "runtime/plan/sim/tuner.h"

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/recompute_costs.h"
#include "runtime/plan/sim/steady_state.h"
#include "runtime/plan/sim/unit_cost_model.h"

#include <algorithm>

namespace bs::runtime {

namespace {

Result<CostModel> scenarioCosts(const GptScenario& s)
{
    if (s.unitsPerStage.empty()) {
        if (!s.unitCosts.empty()) {
            return makeError(ErrorCode::InvalidArgument, "measured unit costs need the partition they are grouped by",
                "pipeline.partition: layer units per stage");
        }
        return costModelFromGpt(
            s.shape, gptCostChunks(s.schedule, s.stages, s.stagesPerRank), s.microBatchSize, s.device);
    }
    if (static_cast<int>(s.unitsPerStage.size()) != s.stages) {
        return makeError(ErrorCode::InvalidArgument,
            "pipeline.partition has " + std::to_string(s.unitsPerStage.size())
                + " entries; allowed: one per stage (pipeline.stages = " + std::to_string(s.stages) + ")",
            "pipeline.partition");
    }
    if (!s.unitCosts.empty()) {
        return costModelFromUnitCosts(
            s.shape, s.unitCosts, s.unitCostsMicroBatch, s.unitsPerStage, s.microBatchSize, s.device);
    }
    return costModelFromUnits(s.shape, s.unitsPerStage, s.microBatchSize, s.device);
}

} // namespace

int gptCostChunks(const std::string& schedule, int stages, int stagesPerRank)
{
    // A rank's chunks are not its share of a p-way split: costsPerStage() would give a V
    // placement's rank 0 the first half of stage 0's layers twice, and the head to rank p - 1.
    const ScheduleInfo* info = findSchedule(schedule);
    return info && info->multiStage() ? stages * info->stagesPerRank(stagesPerRank) : stages;
}

Result<SimulationRequest> makeGptRequest(const GptScenario& scenario)
{
    const ScheduleInfo* info = findSchedule(scenario.schedule);
    if (!info) {
        return makeError(ErrorCode::InvalidArgument, "unknown schedule '" + scenario.schedule + "'", "schedule.name");
    }
    if (scenario.accum < 1 || scenario.microBatchSize < 1 || scenario.batches < 1) {
        return makeError(ErrorCode::InvalidArgument, "accumulation window, micro-batch size and batches must be >= 1",
            "a=" + std::to_string(scenario.accum) + " b=" + std::to_string(scenario.microBatchSize)
                + " batches=" + std::to_string(scenario.batches));
    }
    auto costs = scenarioCosts(scenario);
    if (!costs) {
        return costs.error();
    }
    if (scenario.recompute) {
        *costs = withRecompute(*costs, scenario.shape, scenario.microBatchSize);
    }
    // Whole windows of a per batch, m as the schedule's rules allow (paci-interleaved at p = 4,
    // a = 2: m = 4); a schedule without a window updates every m, so its a is m.
    auto pipeline = resolvePipeline(scenario.schedule, scenario.stages, scenario.microbatches, scenario.accum,
        scenario.stagesPerRank, 0, MicrobatchChoice::WholeWindows);
    if (!pipeline) {
        return pipeline.error();
    }
    SimulationRequest request;
    request.schedule = pipeline->params(scenario.batches); // costs per rank split over its v chunks
    request.costs = std::move(costs).value();
    request.microBatchSize = scenario.microBatchSize;
    return request;
}

int versionLagBound(const Schedule& schedule, const profiler::Report& report)
{
    int lag = 0;
    for (const auto& stage : report.perStage) {
        lag = std::max(lag, stage.maxVersionLag);
    }
    ScheduleParams params = schedule.params;
    params.stages = schedule.stages();
    for (int bound : lagBounds(params)) { // the schedule's stated bound, when it has one (paci)
        lag = std::max(lag, bound);
    }
    return lag;
}

Result<SteadyThroughput> steadyThroughput(SimulationRequest request, int maxBatches)
{
    // The simulator's own steady state (simulate() with figuresOnly): the one place that knows a
    // schedule repeats. A run it could not settle is simulated plainly at maxBatches.
    request.schedule.batches = std::max(maxBatches, kSettleBatches + 3);
    request.figuresOnly = true;
    auto sim = simulate(request);
    if (!sim) {
        return sim.error();
    }
    SteadyThroughput out;
    const double samplesPerBatch = static_cast<double>(request.schedule.microbatches) * request.microBatchSize;
    out.reached = sim->steadyBatchPeriodNs > 0;
    out.batchPeriodS = static_cast<double>(sim->steadyBatchPeriodNs) * 1e-9;
    out.batchesSimulated = out.reached ? sim->settledAtBatches + 2 : request.schedule.batches;
    out.samplesPerSecond = out.reached ? samplesPerBatch / out.batchPeriodS : sim->throughputSamplesPerSecond;
    const double lanes = static_cast<double>(std::max(1, sim->report.stages));
    out.bubbleFraction = out.reached
        ? static_cast<double>(sim->steadyBatchIdleNs) / (lanes * static_cast<double>(sim->steadyBatchPeriodNs))
        : sim->report.bubbleFraction;
    return out;
}

Result<TuneResult> tune(const TuneRequest& request)
{
    if (request.objective == TuneObjective::TimeToTarget && !request.goodput) {
        return makeError(ErrorCode::InvalidArgument, "objective time-to-target needs a measured noise scale",
            "a run directory whose metrics carry \"noise\" (--calibrate / --noise-from), or objective throughput");
    }
    // Validate the base scenario once, so a typo is an error and not "no candidates": the
    // request, and v (every candidate would be refused for it).
    if (auto base = makeGptRequest(request.base); !base) {
        return base.error();
    }
    if (const ScheduleInfo* info = findSchedule(request.base.schedule)) {
        if (Status v = checkStagesPerRank(*info, request.base.stagesPerRank); !v) {
            return v.error();
        }
    }
    TuneResult result;
    std::vector<TuneCandidate> feasible;
    for (int a : request.accumValues) {
        for (int b : request.microBatchSizes) {
            if (request.globalBatch > 0 && a * b != request.globalBatch) {
                ++result.rejectedByBatch;
                continue;
            }
            GptScenario scenario = request.base;
            scenario.accum = a;
            scenario.microBatchSize = b;
            auto sim = makeGptRequest(scenario);
            if (sim && (sim->schedule.accum > 0 ? sim->schedule.accum : sim->schedule.microbatches) != a) {
                ++result.rejectedByBatch; // a = m refused by the schedule's rules (interleaved: m a multiple of p)
                continue;
            }
            if (sim && request.calibration) {
                sim->costs = withFittedTimes(std::move(sim->costs), *request.calibration, b);
            }
            auto simulated = sim ? simulate(*sim) : Result<SimulationResult>(sim.error());
            ++result.evaluated;
            if (!simulated) {
                ++result.rejectedByBatch;
                continue;
            }
            auto steady = request.steadyState
                ? steadyThroughput(*sim)
                : Result<SteadyThroughput>(SteadyThroughput{false, simulated->throughputSamplesPerSecond,
                    simulated->report.bubbleFraction, 0, sim->schedule.batches});
            if (!steady) {
                ++result.rejectedByBatch;
                continue;
            }
            TuneCandidate c;
            c.accum = a;
            c.microBatchSize = b;
            c.steady = steady->reached;
            c.throughputSamplesPerSecond = steady->samplesPerSecond;
            c.bubbleFraction = steady->bubbleFraction; // the steady batch's, as the throughput
            for (const auto& stage : simulated->report.perStage) {
                c.peakMemoryBytes = std::max(c.peakMemoryBytes, stage.peakMemoryBytes);
            }
            c.lagBound = versionLagBound(simulated->schedule, simulated->report);
            if (c.lagBound > request.maxLag) {
                ++result.rejectedByLag;
                continue;
            }
            if (request.memoryBudgetBytes > 0 && c.peakMemoryBytes > request.memoryBudgetBytes) {
                ++result.rejectedByMemory;
                continue;
            }
            const ScheduleParams& params = sim->schedule;
            if (auto pipeline = resolvePipeline(params.name, params.stages, params.microbatches, params.accum,
                    params.stagesPerRank, params.extraDepth)) {
                c.batchPerUpdate = pipeline->batchPerUpdate(b);
            }
            if (request.goodput && c.throughputSamplesPerSecond > 0) {
                const TimeToTargetFigures t = request.goodput->timeToTarget(
                    static_cast<double>(c.batchPerUpdate), c.lagBound, c.throughputSamplesPerSecond);
                c.efficiency = t.efficiency;
                c.stalenessFactor = t.stalenessFactor;
                c.timeToTargetS = t.seconds;
                c.timeToTargetSpreadS = t.spreadSeconds;
            }
            feasible.push_back(c);
        }
    }
    const bool byTime = request.objective == TuneObjective::TimeToTarget;
    std::stable_sort(feasible.begin(), feasible.end(), [byTime](const TuneCandidate& x, const TuneCandidate& y) {
        if (byTime && x.timeToTargetS && y.timeToTargetS && *x.timeToTargetS != *y.timeToTargetS) {
            return *x.timeToTargetS < *y.timeToTargetS;
        }
        if (x.throughputSamplesPerSecond != y.throughputSamplesPerSecond) {
            return x.throughputSamplesPerSecond > y.throughputSamplesPerSecond;
        }
        return x.peakMemoryBytes < y.peakMemoryBytes;
    });
    if (feasible.size() > request.keep) {
        feasible.resize(request.keep);
    }
    result.top = std::move(feasible);
    return result;
}

} // namespace bs::runtime
