#include "ui/tuning/what_if.h"

#include "runtime/schedule/catalogue.h"

#include <algorithm>
#include <chrono>

namespace bs::ui {

std::string scheduleDisplayName(const std::string& schedule)
{
    const runtime::ScheduleInfo* info = runtime::findSchedule(schedule);
    return info ? info->displayName : schedule;
}

std::string runLabel(const std::string& schedule, int accum, int microBatchSize)
{
    return scheduleDisplayName(schedule) + " a=" + std::to_string(accum) + " b=" + std::to_string(microBatchSize);
}

runtime::RunConfig toRunConfig(const WhatIfConfig& c)
{
    runtime::RunConfig rc;
    rc.model.preset = c.model;
    if (auto shape = gptPreset(c.model)) {
        rc.model.shape = *shape;
    }
    rc.pipeline.stages = c.stages;
    rc.pipeline.microbatches = c.accum;
    const runtime::ScheduleInfo* info = runtime::findSchedule(c.schedule);
    rc.pipeline.accum = info && info->takesAccumWindow() ? c.accum : 0;
    rc.pipeline.microBatchSize = c.microBatchSize;
    rc.schedule.name = c.schedule;
    rc.device.name = c.runDevice;
    return rc;
}

runtime::RunConfig toExportConfig(const WhatIfConfig& c)
{
    runtime::RunConfig rc = toRunConfig(c);
    if (rc.device.name == "cpu" && c.device != "cpu") {
        rc.device.name = "cuda";
    }
    return rc;
}

WhatIfConfig fromRunConfig(const runtime::RunConfig& rc)
{
    WhatIfConfig c;
    c.schedule = rc.schedule.name;
    c.stages = rc.pipeline.stages;
    c.model = rc.model.preset.empty() ? c.model : rc.model.preset;
    c.accum = rc.pipeline.effectiveAccum();
    c.microBatchSize = rc.pipeline.microBatchSize;
    c.device = rc.device.name == "cpu" ? "cpu" : "h100";
    c.runDevice = rc.device.name;
    return c;
}

Result<runtime::GptScenario> scenarioFor(const WhatIfConfig& config, const std::string& schedule)
{
    auto shape = gptPreset(config.model);
    if (!shape) {
        return shape.error();
    }
    auto device = runtime::deviceProfile(config.device);
    if (!device) {
        return device.error();
    }
    runtime::GptScenario s;
    s.schedule = schedule;
    s.stages = config.stages;
    s.shape = *shape;
    s.device = *device;
    s.accum = config.accum;
    s.microBatchSize = config.microBatchSize;
    s.batches = config.batches;
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
            runtime::withFittedTimes(std::move(request->costs), calibration->fitFor(schedule), config.microBatchSize);
    }
    auto simulated = runtime::simulate(*request);
    if (!simulated) {
        return simulated.error();
    }
    PredictedRun run;
    run.label = runLabel(schedule, config.accum, config.microBatchSize);
    const auto options = runtime::analysisOptionsFor(simulated->schedule, &request->costs);
    run.staticBytes = options.staticBytes;
    run.paramBytes = options.paramBytes;
    run.activationBytes = options.activationBytes;
    run.lagBound = runtime::versionLagBound(simulated->schedule, simulated->report);
    run.index = TimelineIndex::build(simulated->trace, simulated->report.bubbles); // simulate() analysed it once
    run.result = std::move(simulated).value();
    return run;
}

Result<PredictionPtr> predict(const WhatIfConfig& config)
{
    const auto t0 = std::chrono::steady_clock::now();
    auto prediction = std::make_shared<Prediction>();
    prediction->config = config;
    auto primary = predictRun(config, config.schedule);
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
