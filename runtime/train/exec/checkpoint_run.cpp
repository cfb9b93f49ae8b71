// Checkpoints and resume, the session's side (runtime/plan/rundir/checkpoint_state.h has the files and
// why a checkpoint is taken only where nothing is in flight; PipelineModel::saveCheckpoint the
// tensors). RunSession::runSteps decides when: every training.checkpoint_every batches and at a
// stop request.
#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/train/exec/session_state.h"

#include <chrono>
#include <cmath>
#include <system_error>

namespace bs::runtime {

namespace fs = std::filesystem;

Result<CheckpointState> resumeState(const RunConfig& requested, const SessionOptions& options)
{
    if (!options.outDir) {
        return makeError(
            ErrorCode::InvalidArgument, "resuming needs the run directory that holds the checkpoint", "--resume");
    }
    if (options.reference || options.transport) {
        return makeError(ErrorCode::Unavailable,
            "the reference trainer and multi-process ranks take no checkpoints, so they cannot resume", "--resume");
    }
    auto state = readCheckpointState(*options.outDir / kCheckpointDirName);
    if (!state) {
        return state.error();
    }
    // What may change on resume: how long to train, how often to checkpoint, the thread count.
    RunConfig given = requested;
    given.training.steps = state->config.training.steps;
    given.training.checkpointEvery = state->config.training.checkpointEvery;
    given.device.intraOpThreads = state->config.device.intraOpThreads;
    if (given.optimizer.baseGlobalBatch == 0) { // "the run's first m·b": the checkpoint's says which
        given.optimizer.baseGlobalBatch = state->config.optimizer.baseGlobalBatch;
    }
    const RunConfig& saved = state->config;
    const char* differs = !(given.model == saved.model) ? "model"
        : !(given.pipeline == saved.pipeline)           ? "pipeline"
        : !(given.schedule == saved.schedule)           ? "schedule"
        : !(given.optimizer == saved.optimizer)         ? "optimizer"
        : !(given.data == saved.data)                   ? "data"
        : !(given.training == saved.training)           ? "training"
        : !(given.device == saved.device)               ? "device"
        : !(given == saved)                             ? "profiling"
                                                        : nullptr;
    if (differs) {
        return makeError(ErrorCode::InvalidArgument,
            std::string("the settings differ from the checkpoint's in [") + differs
                + "]; a resumed run keeps its settings (only training.steps, training.checkpoint_every "
                  "and device.intra_op_threads may change)",
            differs);
    }
    if (requested.training.steps < state->step) {
        return makeError(ErrorCode::InvalidArgument,
            "training.steps = " + std::to_string(requested.training.steps) + " is below the checkpoint's step "
                + std::to_string(state->step),
            "training.steps");
    }
    state->config.training.steps = requested.training.steps;
    state->config.training.checkpointEvery = requested.training.checkpointEvery;
    state->config.device.intraOpThreads = requested.device.intraOpThreads;
    return state;
}

void RunSession::Impl::setUpCheckpoints()
{
    checkpointEvery = 0;
    stopsAtBoundary = false;
    if (config.training.checkpointEvery <= 0) {
        return;
    }
    if (!writer || !model || options.transport) {
        summary.notes.push_back(!writer ? "checkpoints off: the run has no run directory"
                                        : "checkpoints off: the reference trainer and multi-process ranks take none");
        return;
    }
    checkpointEvery = config.training.checkpointEvery;
    // The serial driver can end a schedule at a batch boundary (the cut of a live Apply).
    stopsAtBoundary = options.executor == ExecutorKind::Serial;
}

Status RunSession::Impl::writeCheckpoint()
{
    if (!writer || !model || lastCheckpointStep == stepsDone) {
        return ok();
    }
    const auto started = SessionClock::now();
    const fs::path dir = writer->checkpointDir();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        return makeError(ErrorCode::IoError, "cannot create the checkpoint directory: " + ec.message(), dir.string());
    }
    if (Status saved = model->saveCheckpoint(dir, stepsDone); !saved) {
        return saved;
    }
    CheckpointState s;
    s.step = stepsDone;
    s.microbatchesDone = mbDone;
    s.cursorFirstMicrobatch = cursor->firstMicrobatch;
    s.cursorFirstSequence = cursor->firstSequence;
    s.cursorBatchSize = cursor->batchSize;
    s.virtualTime = virtualNow;
    s.versions = versions.empty() ? std::vector<int>(static_cast<std::size_t>(model->stages()), 0) : versions;
    s.updatesOffset = model->options().optimizer.updatesOffset;
    s.tokensBefore = tokensBefore;
    s.settingsStep = settingsStep;
    s.trainWallS = seconds(trainWall);
    s.evalWallS = seconds(evalWall);
    s.busy = busy;
    s.config = config;
    s.initialConfig = initialConfig;
    {
        const std::lock_guard<std::mutex> lock(mutex);
        for (const AppliedChange& c : changes) {
            s.changes.push_back({c.step, c.firstMicrobatch, c.time, c.label, c.config});
        }
        s.losses = summary.losses;
        s.valLosses = summary.valLosses;
        s.valSteps = summary.valSteps;
        s.valVirtualTimesS = summary.valVirtualTimesS;
        s.timeToTargetS = summary.timeToTargetS;
        s.stepToTarget = summary.stepToTarget;
    }
    if (Status written = writeCheckpointState(dir, s); !written) {
        return written; // the previous state.json and its archives stay in force
    }
    removeOtherCheckpointFiles(dir, stepsDone);
    lastCheckpointStep = stepsDone;
    std::int64_t bytes = 0;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        bytes += e.is_regular_file(ec) ? static_cast<std::int64_t>(e.file_size(ec)) : 0;
    }
    const std::lock_guard<std::mutex> lock(mutex);
    summary.checkpoints += 1;
    summary.checkpointWallS += seconds(SessionClock::now() - started);
    summary.checkpointBytes = bytes;
    return ok();
}

namespace {

using WallDuration = SessionClock::duration;

WallDuration wallOf(double s)
{
    return std::chrono::duration_cast<WallDuration>(std::chrono::duration<double>(s));
}

// The events of the trace before the checkpoint: everything that ended by its time, except a
// marker at that time for a change after it (the resumed run applies nothing it did not checkpoint).
bool beforeCheckpoint(const profiler::TraceEvent& ev, const CheckpointState& s)
{
    if (ev.end != s.virtualTime) {
        return ev.end < s.virtualTime;
    }
    return ev.kind != profiler::EventKind::Marker || ev.microbatch < s.step;
}

} // namespace

Status RunSession::Impl::restoreSession(const CheckpointState& s)
{
    stepsDone = s.step;
    mbDone = s.microbatchesDone;
    cursor->firstMicrobatch = s.cursorFirstMicrobatch;
    cursor->firstSequence = s.cursorFirstSequence;
    cursor->batchSize = s.cursorBatchSize;
    virtualNow = s.virtualTime;
    versions = s.versions;
    tokensBefore = s.tokensBefore;
    settingsStep = s.settingsStep;
    trainWall = wallOf(s.trainWallS);
    evalWall = wallOf(s.evalWallS);
    busy = s.busy;
    lastCheckpointStep = s.step;
    {
        const std::lock_guard<std::mutex> lock(mutex);
        for (const CheckpointChange& c : s.changes) {
            AppliedChange a;
            a.step = c.step;
            a.firstMicrobatch = c.firstMicrobatch;
            a.time = c.time;
            a.label = c.label;
            a.config = c.config;
            changes.push_back(a);
            meta.attributes["marker." + std::to_string(c.step)] = c.label;
        }
        summary.losses = s.losses;
        summary.steps = s.step;
        if (!s.losses.empty()) {
            summary.finalTrainLoss = s.losses.back();
        }
        summary.valLosses = s.valLosses;
        summary.valSteps = s.valSteps;
        summary.valVirtualTimesS = s.valVirtualTimesS;
        if (!s.valLosses.empty()) {
            summary.valLoss = s.valLosses.back();
        }
        summary.timeToTargetS = s.timeToTargetS;
        summary.stepToTarget = s.stepToTarget;
    }
    meta.attributes["resumed." + std::to_string(s.step)] =
        "resumed from the checkpoint at step " + std::to_string(s.step);
    store.setMeta(meta);
    if (!writer || !config.profiling.trace) {
        return ok();
    }
    // The trace continues: the events up to the checkpoint, from the stopped session's file.
    auto run = readRunDir(writer->dir());
    if (run && run->trace) {
        auto old = readRunTrace(*run);
        if (!old) {
            return old.error();
        }
        for (std::size_t i = 0; i < (*old)->size(); ++i) {
            if (beforeCheckpoint((**old)[i], s)) {
                store.append((**old)[i]);
            }
        }
    }
    return writer->appendTrace(*store.snapshot());
}

} // namespace bs::runtime
