#include "ui/tuning/what_if.h"

#include "runtime/plan/partition/partition_choice.h"
#include "runtime/plan/schedule/catalogue.h"

#include <algorithm>
#include <chrono>

namespace bs::ui {

std::string scheduleDisplayName(const std::string& schedule)
{
    const runtime::ScheduleInfo* info = runtime::findSchedule(schedule);
    return info ? info->displayName : schedule;
}

std::string runLabel(const std::string& schedule, int accum, int microBatchSize, int stagesPerRank)
{
    return scheduleDisplayName(schedule) + " a=" + std::to_string(accum) + " b=" + std::to_string(microBatchSize)
        + (stagesPerRank > 1 ? " v=" + std::to_string(stagesPerRank) : std::string());
}

std::string runLabel(const runtime::RunConfig& config)
{
    const runtime::ScheduleInfo* info = runtime::findSchedule(config.schedule.name);
    return runLabel(config.schedule.name, runtime::shownWindowOf(config), config.pipeline.microBatchSize,
        info ? info->stagesPerRank(config.pipeline.stagesPerRank) : 1);
}

runtime::RunConfig defaultWhatIfRun()
{
    runtime::RunConfig rc;
    rc.schedule.name = "paci";
    rc.pipeline.stages = 8;
    rc.pipeline.microbatches = 8;
    rc.pipeline.microBatchSize = 8;
    return rc;
}

runtime::RunConfig toRunConfig(const WhatIfConfig& c)
{
    runtime::RunConfig rc = c.run;
    // The window slider sets m = a; where the schedule refuses that m (paci-interleaved: a
    // multiple of p), the run takes the m the what-if simulates: whole windows, as its rules allow.
    const runtime::PipelineConfig& p = rc.pipeline;
    if (auto pipeline = runtime::resolvePipeline(rc.schedule.name, p.stages, p.microbatches, p.accum, p.stagesPerRank,
            p.extraDepth, runtime::MicrobatchChoice::WholeWindows)) {
        rc.pipeline.microbatches = pipeline->microbatches;
        rc.pipeline.accum = pipeline->accum();
    }
    return rc;
}

runtime::RunConfig toExportConfig(const WhatIfConfig& c)
{
    runtime::RunConfig rc = toRunConfig(c);
    if (rc.device.name == "cpu" && c.deviceProfile != "cpu") {
        rc.device.name = "cuda";
    }
    return rc;
}

WhatIfConfig fromRunConfig(const runtime::RunConfig& rc)
{
    WhatIfConfig c;
    c.run = rc;
    c.deviceProfile = rc.device.name == "cpu" ? "cpu" : "h100";
    return c;
}

Result<std::vector<int>> whatIfPartition(const WhatIfConfig& config)
{
    const runtime::PipelineConfig& p = config.run.pipeline;
    if (p.partition == "flops" && p.layersPerStage.empty() && config.unitCosts.empty()) {
        return std::vector<int>{}; // the FLOPs split: costModelFromGpt's own
    }
    const std::vector<runtime::UnitCost> units =
        runtime::unitCostsAt(config.unitCosts, config.unitCostsMicroBatch, config.microBatchSize());
    auto choice = runtime::choosePartition(toRunConfig(config), units);
    if (!choice) {
        return choice.error();
    }
    return choice->plan.unitCount;
}

int stagesPerRankFor(const WhatIfConfig& config, const std::string& schedule)
{
    const runtime::ScheduleInfo* info = runtime::findSchedule(schedule);
    const int v = config.run.pipeline.stagesPerRank;
    // The panel's v where this schedule's traits take it (the baseline may place its stages
    // otherwise); else the schedule's own.
    return info && v >= info->defaultStagesPerRank && v <= info->maxStagesPerRank ? v : 0;
}

Result<runtime::GptScenario> scenarioFor(const WhatIfConfig& config, const std::string& schedule)
{
    if (const std::string& preset = config.run.model.preset; !preset.empty()) {
        if (auto shape = gptPreset(preset); !shape) { // a named model must be one (the shape is its)
            return shape.error();
        }
    }
    auto device = runtime::deviceProfile(config.deviceProfile);
    if (!device) {
        return device.error();
    }
    runtime::GptScenario s;
    s.schedule = schedule;
    s.stages = config.run.pipeline.stages;
    s.shape = config.run.model.shape; // the preset's when the config names one (config_toml.h)
    s.device = *device;
    s.accum = config.accum();
    s.microBatchSize = config.microBatchSize();
    s.batches = config.batches;
    // The run's m: makeGptRequest keeps it where it is whole windows the schedule takes, as
    // toRunConfig() does for what Run trains, so the two agree without normalising it twice.
    s.microbatches = config.run.pipeline.microbatches;
    s.recompute = config.run.model.recompute; // recompute_costs.h: an extra forward, inputs kept only
    auto units = whatIfPartition(config); // the run's split, so a different one is predicted before it runs
    if (!units) {
        return units.error();
    }
    s.unitsPerStage = std::move(units).value();
    if (!s.unitsPerStage.empty()) {
        s.unitCosts = config.unitCosts;
        s.unitCostsMicroBatch = config.unitCostsMicroBatch;
    }
    s.stagesPerRank = stagesPerRankFor(config, schedule);
    return s;
}

Result<PredictedRun> predictRun(const WhatIfConfig& config, const std::string& schedule)
{
    auto scenario = scenarioFor(config, schedule);
    if (!scenario) {
        return scenario.error();
    }
    auto request = runtime::makeGptRequest(*scenario);
    if (!request) {
        return request.error();
    }
    if (const CalibrationPtr& calibration = config.calibration) {
        request->costs =
            runtime::withFittedTimes(std::move(request->costs), calibration->fitFor(schedule), config.microBatchSize());
    }
    auto simulated = runtime::simulate(*request);
    if (!simulated) {
        return simulated.error();
    }
    PredictedRun run;
    // The a simulated: the window, or m for a schedule without one (a baseline that refuses m = a takes more).
    const runtime::ScheduleParams& params = simulated->schedule.params;
    const auto pipeline = runtime::resolvePipeline(
        params.name, params.stages, params.microbatches, params.accum, params.stagesPerRank, params.extraDepth);
    const int window = pipeline ? pipeline->shownWindow() : params.microbatches;
    run.label = runLabel(schedule, window, config.microBatchSize(), simulated->schedule.stagesPerRank());
    const auto options = runtime::analysisOptionsFor(simulated->schedule, &request->costs);
    run.staticBytes = options.staticBytes;
    run.paramBytes = options.paramBytes;
    run.activationBytes = options.activationBytes;
    run.lagBound = runtime::versionLagBound(simulated->schedule, simulated->report);
    // The steady state, never the few batches shown: a window's warm-up spread over 2 batches reads
    // as a bubble its steady batches do not have (issue 30). Where none is found it says so.
    auto steady = runtime::steadyThroughput(*request);
    if (!steady) {
        return steady.error();
    }
    run.steady = *steady;
    if (pipeline) {
        run.batchPerUpdate = pipeline->batchPerUpdate(config.microBatchSize());
    }
    if (config.goodput && run.steady.reached && run.steady.samplesPerSecond > 0 && run.batchPerUpdate > 0) {
        run.timeToTarget = config.goodput->timeToTarget(
            static_cast<double>(run.batchPerUpdate), run.lagBound, run.steady.samplesPerSecond);
    }
    run.index = TimelineIndex::build(simulated->trace, simulated->report.bubbles); // simulate() analysed it once
    run.result = std::move(simulated).value();
    return run;
}

Result<PredictionPtr> predict(const WhatIfConfig& config)
{
    const auto t0 = std::chrono::steady_clock::now();
    auto prediction = std::make_shared<Prediction>();
    prediction->config = config;
    auto primary = predictRun(config, config.schedule());
    if (!primary) {
        return primary.error();
    }
    prediction->primary = std::move(primary).value();
    if (!config.baseline.empty()) {
        auto baseline = predictRun(config, config.baseline);
        if (!baseline) {
            return baseline.error();
        }
        prediction->baseline = std::move(baseline).value();
    }
    prediction->computeMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return PredictionPtr(std::move(prediction));
}

} // namespace bs::ui
