#pragma once
// The state of one training run behind the RunSession facade (private to runtime/train/exec). The
// facade (run_session.cpp) creates it and routes calls; each driver has its own file
// (serial_run.cpp, threaded_run.cpp, rank_run.cpp, reference_run.cpp), as do batch recording
// (batch_recorder.cpp), live Apply (live_apply.cpp) and the final summary (run_summary.cpp).
// Torch-free: tensors live in PipelineModel / ReferenceTrainer.

#include "runtime/plan/rundir/checkpoint_state.h"
#include "runtime/plan/rundir/run_dir_writer.h"
#include "runtime/plan/schedule/schedule.h"
#include "runtime/plan/sim/scheduler_core.h"
#include "runtime/train/data/token_source.h"
#include "runtime/train/exec/device_runtime.h"
#include "runtime/train/exec/run_session.h"
#include "runtime/train/exec/tensor_executor.h"
#include "runtime/train/exec/unit_profile.h"
#include "runtime/train/model/pipeline_model.h"
#include "runtime/train/model/reference_trainer.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace bs::runtime {

using SessionClock = std::chrono::steady_clock;

inline double seconds(SessionClock::duration d)
{
    return std::chrono::duration<double>(d).count();
}

/// Micro-batches one update applies, read from the schedule's first update on the last stage.
int updateWindow(const Schedule& schedule);

/// The model options of `c` run under `schedule` (weight policy, update window, LR schedule in
/// updates, drift sampling).
ModelOptions modelOptions(const RunConfig& c, const Schedule& schedule);

/// Layer-unit costs measured on `device` (−1 = CPU) for `config`'s shape, micro-batch and dtype.
Result<std::vector<UnitCost>> profileUnitsOnDevice(const RunConfig& config, int device);
/// The partition `config` asks for (stage_partition.cpp); "measured" profiles on mo's stage-0
/// device first. Sets mo.unitsPerStage for measured and explicit partitions.
Result<PartitionRecord> resolvePartition(const RunConfig& config, ModelOptions& mo);

/// Where the training data is: run-wide micro-batch `firstMicrobatch` and the ones after it take
/// consecutive rows of `batchSize` sequences from sequence `firstSequence` on. Apply moves it (b may
/// change), so a run reads the sequence stream once, in order, whatever its settings. Changed only
/// between two schedules, when no forward runs.
struct DataCursor
{
    std::int64_t firstMicrobatch = 0;
    std::int64_t firstSequence = 0;
    int batchSize = 1;

    MicroBatch batch(const TokenSource& source, std::int64_t mb) const;
};

TokenBatch toTokenBatch(MicroBatch m);

/// train --resume: the checkpoint in options.outDir with `requested`'s training.steps,
/// training.checkpoint_every and device.intra_op_threads put into its config (checkpoint_run.cpp).
/// Errors: no run directory, a reference or multi-process session (InvalidArgument / Unavailable),
/// the checkpoint's read errors, settings that differ elsewhere (InvalidArgument naming the section).
Result<CheckpointState> resumeState(const RunConfig& requested, const SessionOptions& options);

struct RunSession::Impl
{
    using Clock = SessionClock;

    RunConfig config;
    RunConfig initialConfig; // the run's first settings (before any Apply): validation set, trace analysis
    SessionOptions options;
    std::unique_ptr<TokenSource> data;
    std::unique_ptr<DeviceRuntime> device; // before the model: its memory attribution outlives the tensors' frees
    std::optional<PipelineModel> model;
    std::optional<ReferenceTrainer> reference;
    std::vector<TokenBatch> validation;
    profiler::TraceStore store;
    std::optional<RunDirWriter> writer;
    std::atomic<bool> stop{false};
    // Checkpoints (checkpoint_run.cpp): every `checkpointEvery` batches (0 = off: no run directory,
    // a reference or multi-process run); a stop request then ends the run at the next batch
    // boundary (serial driver) and writes one more.
    int checkpointEvery = 0;
    bool stopsAtBoundary = false;
    std::atomic<bool> stopAtBoundary{false};
    std::atomic<bool> targetReached{false}; // SessionOptions::stopAtTarget: the validation loss reached it
    int lastCheckpointStep = -1;

    mutable std::mutex mutex; // guards summary, fresh, pendingApply, changes; config's writes
    RunSummary summary;
    std::vector<BatchMetrics> fresh;

    std::atomic<int> stepsDone{0}; // written by the training thread; read by stepsDone(), requestApply()
    std::int64_t mbDone = 0; // run-wide micro-batches trained (data index, trace ids)
    std::shared_ptr<DataCursor> cursor; // the token function's position (moved on by Apply)
    profiler::TraceMeta meta;
    profiler::AnalysisOptions analysis; // how the first settings' trace is analysed (the summary's figures)
    // Live Apply: pendingApply and changes are guarded by `mutex`; `cut` tells the driver.
    std::atomic<bool> cut{false};
    std::optional<RunConfig> pendingApply; // as requested (withLiveSettings() picks the live fields)
    std::vector<AppliedChange> changes;
    double tokensBefore = 0; // tokens trained before the settings in force (since step settingsStep)
    int settingsStep = 0;
    std::atomic<bool> broken{false};
    std::atomic<bool> finished{false};
    TimeNs virtualNow = 0; // end of the timeline so far
    std::vector<int> versions;
    /// Interleaved and V placements: the rank of each model stage (memory per rank); empty when
    /// every rank holds one stage.
    std::vector<int> rankOfStage;
    Clock::duration trainWall{};
    Clock::duration evalWall{};
    TimeNs busy = 0;
    // The last recorded batch's virtual and wall time (s): a stopped drive returns before it adds
    // its pass to virtualNow and stepsDone, and the summary then takes what the batches measured.
    double recordedVirtualS = 0, recordedWallS = 0;

    int m() const { return config.pipeline.microbatches; }
    double tokensPerBatch() const
    {
        return static_cast<double>(m()) * config.pipeline.microBatchSize * config.model.shape.seqLen;
    }
    /// Tokens trained in steps [0, steps).
    double tokensUpTo(int steps) const { return tokensBefore + tokensPerBatch() * (steps - settingsStep); }

    // batch_recorder.cpp
    /// Mean training loss of the global batch whose first run-wide micro-batch is `firstMb`
    /// (NaN when a micro-batch's loss is not known here), read from the device in one transfer
    /// after the batch's last action. Diverged when a known loss is not finite.
    Result<double> batchLoss(std::int64_t firstMb) const;
    bool evaluationDue(int step) const;
    std::optional<double> maybeEvaluate(bool due);
    /// Every stage's figures now (PipelineModel::stageMetrics); empty for the reference trainer.
    /// The one source of a batch record's and the summary's per_stage (batch_recorder.cpp).
    std::vector<StageMetrics> stageMetricsNow() const;
    /// The gradient noise scale of the stages this process holds (PipelineModel::noiseScale),
    /// their sums for the model; nullopt until each of them has an estimate, and for the
    /// reference trainer.
    std::optional<NoiseScaleEstimate> noiseScaleNow() const;
    /// `completedAt`: when the batch completed (default: now). `evaluate`: run the validation
    /// pass if one is due (threaded chunks decide themselves).
    Status recordBatch(int step, double loss, TimeNs virtualEnd, Clock::time_point wallStart,
        std::optional<Clock::time_point> completedAt = std::nullopt, std::optional<bool> evaluate = std::nullopt);

    // The drivers: serial_run.cpp (which also picks the driver), threaded_run.cpp, rank_run.cpp,
    // reference_run.cpp.
    Status runPipeline(int count);
    /// What every driver starts from: stop flag, the timeline's end, the weight versions and the
    /// run-wide micro-batch ids so far.
    DriveOptions driveOptions() const;
    Status runThreaded(int count, const Schedule& schedule, TensorExecutor& executor);
    Status runRank(int count, const Schedule& schedule, TensorExecutor& executor);
    Status runReference(int count);

    // live_apply.cpp
    Result<RunConfig> liveConfig(const RunConfig& wanted) const;
    Status applyPending();

    // checkpoint_run.cpp
    /// Whether this session takes checkpoints (and why not, as a note) from config and options.
    void setUpCheckpoints();
    /// Checkpoint at stepsDone: the model's archives, then state.json, then older archives go.
    Status writeCheckpoint();
    /// Everything a resumed session takes from its checkpoint besides the model: counters, data
    /// position, summary series, applied changes; the trace up to the checkpoint into the store.
    Status restoreSession(const CheckpointState& state);

    // run_summary.cpp: the summary at the end of the run, from its trace.
    RunSummary closeSummary(const profiler::TraceSnapshot& trace);
};

} // namespace bs::runtime
