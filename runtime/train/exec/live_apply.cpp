// Live Apply: validating a requested change, and applying it at a global-batch boundary between
// two schedules (RunSession::requestApply's contract, run_session.h).
#include "runtime/plan/config/config_validate.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/train/exec/session_state.h"

#include <cmath>

namespace bs::runtime {

RunConfig withLiveSettings(const RunConfig& running, const RunConfig& wanted)
{
    RunConfig next = running;
    next.schedule.name = wanted.schedule.name;
    next.pipeline.microbatches = wanted.pipeline.microbatches;
    next.pipeline.accum = wanted.pipeline.accum;
    next.pipeline.microBatchSize = wanted.pipeline.microBatchSize;
    return next;
}

Result<RunConfig> RunSession::Impl::liveConfig(const RunConfig& wanted) const
{
    if (reference || options.transport || options.executor != ExecutorKind::Serial) {
        return makeError(ErrorCode::Unavailable,
            "Apply needs the serial pipelined executor (not the threaded executor, a multi-process rank or the "
            "reference trainer)",
            "executor");
    }
    if (wanted.pipeline.stages != config.pipeline.stages) {
        return makeError(ErrorCode::InvalidArgument,
            "pipeline.stages cannot change in a live run (" + std::to_string(config.pipeline.stages) + " -> "
                + std::to_string(wanted.pipeline.stages) + "); start a new run",
            "pipeline.stages");
    }
    if (wanted.model.preset != config.model.preset) {
        return makeError(ErrorCode::InvalidArgument,
            "model.preset cannot change in a live run ('" + config.model.preset + "' -> '" + wanted.model.preset
                + "'); start a new run",
            "model.preset");
    }
    if (wanted.device.name != config.device.name) {
        return makeError(ErrorCode::InvalidArgument,
            "device.name cannot change in a live run ('" + config.device.name + "' -> '" + wanted.device.name
                + "'); start a new run",
            "device.name");
    }
    RunConfig next = withLiveSettings(config, wanted);
    if (Status valid = validate(next); !valid) {
        return valid.error();
    }
    ScheduleParams probe = toScheduleParams(next);
    probe.batches = 1;
    if (auto schedule = makeSchedule(probe); !schedule) {
        return schedule.error();
    }
    return next;
}

Status RunSession::Impl::applyPending()
{
    std::optional<RunConfig> settings;
    {
        const std::lock_guard<std::mutex> lock(mutex);
        settings.swap(pendingApply);
        cut = false;
    }
    if (!settings) {
        return ok();
    }
    auto next = liveConfig(*settings);
    if (!next) {
        return next.error();
    }
    ScheduleParams probe = toScheduleParams(*next);
    probe.batches = 1;
    auto schedule = makeSchedule(probe);
    if (!schedule) {
        return schedule.error();
    }
    ModelOptions mo = modelOptions(*next, *schedule);
    // The LR schedule continues where the training is: `stepsDone` batches of the new window size;
    // with optimizer.lr_scaling (sqrt, linear) the schedule's steps are of the new global batch,
    // so the position is the sequences trained so far in batches of the new size (lr_scaling.h).
    const double updatesPerBatch = static_cast<double>(next->pipeline.microbatches) / mo.updateEvery;
    const double newBatch = static_cast<double>(next->pipeline.microbatches) * next->pipeline.microBatchSize;
    const double position = next->optimizer.lrScaling == "none"
        ? static_cast<double>(stepsDone)
        : tokensUpTo(stepsDone) / config.model.shape.seqLen / newBatch;
    mo.optimizer.updatesOffset = static_cast<int>(std::lround(position * updatesPerBatch)) - model->version(0);
    if (Status s = model->reconfigure(mo); !s) {
        return s;
    }
    // The data continues at the next unread sequence, now in micro-batches of the new b.
    cursor->firstSequence += (mbDone - cursor->firstMicrobatch) * cursor->batchSize;
    cursor->firstMicrobatch = mbDone;
    cursor->batchSize = next->pipeline.microBatchSize;
    tokensBefore = tokensUpTo(stepsDone);
    settingsStep = stepsDone;
    {
        const std::lock_guard<std::mutex> lock(mutex); // requestApply() validates against config
        config = *next;
    }

    AppliedChange change;
    change.step = stepsDone;
    change.firstMicrobatch = mbDone;
    change.time = virtualNow;
    change.label = "apply: " + config.schedule.name + " m=" + std::to_string(config.pipeline.microbatches) + " a="
        + std::to_string(runtime::shownWindowOf(config)) + " b=" + std::to_string(config.pipeline.microBatchSize);
    change.config = config;
    profiler::TraceEvent marker;
    marker.start = virtualNow;
    marker.end = virtualNow;
    marker.kind = profiler::EventKind::Marker;
    marker.microbatch = stepsDone;
    marker.version = model->version(0);
    meta.attributes["marker." + std::to_string(stepsDone)] = change.label;
    store.setMeta(meta);
    store.append(marker);
    {
        const std::lock_guard<std::mutex> lock(mutex);
        summary.schedule = config.schedule.name;
        changes.push_back(change);
    }
    if (writer) {
        return writer->writeConfig(config); // the settings in force; the markers are the history
    }
    return ok();
}

Status RunSession::requestApply(const RunConfig& settings)
{
    Impl& d = *m_impl;
    if (d.broken || d.finished) {
        return makeError(ErrorCode::InvalidArgument, "the run has ended; nothing to apply to",
            "step " + std::to_string(d.stepsDone));
    }
    // config is written under the lock (applyPending(), on the training thread).
    const std::lock_guard<std::mutex> lock(d.mutex);
    auto next = d.liveConfig(settings);
    if (!next) {
        return next.error();
    }
    d.pendingApply = settings;
    d.cut = true;
    return ok();
}

} // namespace bs::runtime
