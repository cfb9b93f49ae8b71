#include "runtime/plan/sim/tuner.h"

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/recompute_costs.h"
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
        return costModelFromGpt(s.shape, s.stages, s.microBatchSize, s.device);
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

Result<TuneResult> tune(const TuneRequest& request)
{
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
            TuneCandidate c;
            c.accum = a;
            c.microBatchSize = b;
            c.throughputSamplesPerSecond = simulated->throughputSamplesPerSecond;
            c.bubbleFraction = simulated->report.bubbleFraction;
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
            feasible.push_back(c);
        }
    }
    std::stable_sort(feasible.begin(), feasible.end(), [](const TuneCandidate& x, const TuneCandidate& y) {
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
