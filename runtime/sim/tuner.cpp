#include "runtime/sim/tuner.h"

#include "runtime/sim/recompute_costs.h"

#include "runtime/schedule/catalogue.h"

#include <algorithm>

namespace bs::runtime {

Result<SimulationRequest> makeGptRequest(const GptScenario& scenario)
{
    if (!isKnownSchedule(scenario.schedule)) {
        return makeError(ErrorCode::InvalidArgument, "unknown schedule '" + scenario.schedule + "'", "schedule.name");
    }
    if (scenario.accum < 1 || scenario.microBatchSize < 1 || scenario.batches < 1) {
        return makeError(ErrorCode::InvalidArgument, "accumulation window, micro-batch size and batches must be >= 1",
            "a=" + std::to_string(scenario.accum) + " b=" + std::to_string(scenario.microBatchSize)
                + " batches=" + std::to_string(scenario.batches));
    }
    auto costs = costModelFromGpt(scenario.shape, scenario.stages, scenario.microBatchSize, scenario.device);
    if (!costs) {
        return costs.error();
    }
    if (scenario.recompute) {
        *costs = withRecompute(*costs, scenario.shape, scenario.microBatchSize);
    }
    SimulationRequest request;
    request.schedule.name = scenario.schedule;
    request.schedule.stages = scenario.stages;
    request.schedule.microbatches = scenario.accum;
    request.schedule.accum = scenario.accum;
    request.schedule.batches = scenario.batches;
    request.schedule.stagesPerRank = scenario.stagesPerRank; // costs per rank split over its v chunks
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
    // Validate the base scenario once, so a typo is an error and not "no candidates".
    if (auto base = makeGptRequest(request.base); !base) {
        return base.error();
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
