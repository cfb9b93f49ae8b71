#pragma once
// The GPT split into p stages, each with its own optimizer, and the tensors in flight between
// them. The tensor executor drives it action by action (F, B, I, W, U); activations and
// gradients pass between stages as tensors inside. Torch-free header (pimpl).
//
// Weight policies (from the schedule):
//   Flush        one update per global batch, applied by U after the flush (LocalAccumulator, a = m).
//   InPlace      paci (a) and async-1f1b (a = 1): bs::paci::LocalAccumulator, updated in place while
//                older backward passes are pending; see bubblescope/paci/local_accumulator.h for
//                which tensors those read at the old vs the new version.
//   Stash        PipeDream: when a stage updates while micro-batches forwarded on the current
//                version are pending, it first keeps a copy of that version; their backward passes
//                copy it into the live parameters, run, and copy the current values back. So a
//                backward uses exactly the weights its forward used. Copies are charged to the
//                stage's Stash memory.
//   TwoVersions  PipeDream-2BW: the same mechanism; the schedule keeps at most two versions.
// All updates use the paci library's AdamW (one implementation).

#include "runtime/plan/common/noise_scale.h"
#include "runtime/plan/common/stage_metrics.h"
#include "runtime/train/model/hand_off.h"
#include "runtime/train/model/model_options.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace bs::runtime {

/// What PipelineModel::observeHandOffCopies() tells (model stages, the global micro-batch id).
class HandOffCopyObserver
{
public:
    virtual ~HandOffCopyObserver() = default;
    virtual void copyBegin(int fromStage, int toStage, std::int64_t microbatch) = 0;
    virtual void copyEnd(int fromStage, int toStage, std::int64_t microbatch) = 0;
};

/// Threads: forward/backward/backwardInput/backwardWeight/update for different stages may run
/// concurrently (the threaded driver), never two calls for the same stage at once; loss() may be
/// called from any thread. evaluate(), stageMetrics(), resetStats() and pendingCount() read every
/// stage: call them only while no stage is running.
class PipelineModel
{
public:
    /// Builds the stages (weights from options.seed, identical for any partition) and their
    /// optimizers; installs the memory tracker. Errors: bad shape/partition (InvalidArgument).
    static Result<PipelineModel> create(const ModelOptions& options, TokenFn tokens);
    PipelineModel(PipelineModel&&) noexcept;
    PipelineModel& operator=(PipelineModel&&) noexcept;
    ~PipelineModel();

    int stages() const;
    const ModelOptions& options() const;

    /// Changes the weight policy, update window, micro-batch size and optimizer schedule of a
    /// running model between two global batches (a live Apply), keeping the weights, the AdamW
    /// state, the versions and the statistics. The stages and the shape must stay (InvalidArgument);
    /// nothing may be in flight and no gradient unapplied (Internal). The token function is the
    /// caller's: it must now deliver micro-batches of options.microBatchSize.
    Status reconfigure(const ModelOptions& options);

    /// Checkpoint (runtime/plan/rundir/checkpoint_state.h; pipeline_checkpoint.cpp): writes each stage
    /// this process holds to `dir`/stage<s>-step<step>.pt (weights, AdamW moments and step counts,
    /// version, drift-sampling position, lag/drift statistics) and torch's default generators (CPU,
    /// and each CUDA device a stage uses) to rng-step<step>.pt, each file atomically. Only between
    /// schedules with nothing in flight (no pending micro-batch, no gradient unapplied): Internal
    /// otherwise; IoError when a file cannot be written.
    Status saveCheckpoint(const std::filesystem::path& dir, int step);
    /// Loads what saveCheckpoint() wrote into this freshly built model (same shape, partition and
    /// stages): every value is replaced, so the model continues exactly where the saved one was.
    /// IoError (a missing or oversized file), ParseError naming the file and the tensor (not an
    /// archive, a missing tensor, a shape that differs).
    Status loadCheckpoint(const std::filesystem::path& dir, int step);

    /// The host work of stage `stage`'s forward of `microbatch` that is no part of its measured
    /// time: stage 0's tokens (and, with setTargetsFromTokens, the last stage's targets) are made
    /// on the host and staged (in pinned memory for a GPU stage, so the forward only enqueues
    /// their copy). The tensor executor calls it before the action's timer starts; forward() does
    /// it itself when nobody did. Errors as forward()'s (a micro-batch of the wrong shape).
    Status prepareForward(int stage, std::int64_t microbatch);
    /// F: stage 0 reads the micro-batch's tokens; other stages take the activation the previous
    /// stage produced for it; the last stage computes the loss (kept on its device: a non-finite
    /// loss shows as non-finite gradients, ErrorCode::Diverged at the next update, and in readLosses()).
    Result<StepInfo> forward(int stage, std::int64_t microbatch);
    /// B: full backward; hands the input gradient to the previous stage.
    Result<StepInfo> backward(int stage, std::int64_t microbatch);
    /// I: input gradient only (graph kept for W). W: weight gradient, frees the graph.
    Result<StepInfo> backwardInput(int stage, std::int64_t microbatch);
    Result<StepInfo> backwardWeight(int stage, std::int64_t microbatch);
    /// U: applies the gradients of the last `microbatches` backward passes of this stage. Errors:
    /// Internal when a different number completed; Diverged for non-finite gradients.
    Status update(int stage, int microbatches);

    /// Last-stage loss of a micro-batch (unscaled), once its forward ran. The forward keeps it on
    /// the stage's device (no host synchronisation inside the action); the first read copies it to
    /// the host: prefer readLosses() for a whole batch (one transfer).
    std::optional<double> loss(std::int64_t microbatch) const;
    /// The losses of micro-batches [first, first + count) (nullopt: no forward of it ran on the
    /// last stage here), copied to the host in one transfer for all that are still on the device.
    std::vector<std::optional<double>> readLosses(std::int64_t first, int count) const;
    /// Device-to-host loss transfers so far (one per readLosses() or loss() call that found losses
    /// still on the device).
    std::int64_t lossReads() const;
    /// Mean loss over `batches` with the current weights of every stage; no gradients, memory
    /// not charged to any stage.
    Result<double> evaluate(const std::vector<TokenBatch>& batches);

    int version(int stage) const;
    /// The stage's figures now (memory measured by the tracker, lag and drift from its
    /// accumulator, recompute counts): the one per-stage record metrics.jsonl, summary.json and the
    /// GUI carry. Another rank's stage (options.onlyStage) reads as all zeros but its index.
    StageMetrics stageMetrics(int stage) const;
    /// The stage's smoothed gradient noise scale (noise_probe_p.h says how it is measured);
    /// nullopt before its first estimate and for another rank's stage.
    std::optional<StageNoiseScale> noiseScale(int stage) const;
    /// The stage's weight gradients as they are now (.grad, accumulated since its last update),
    /// flattened in parameter order; empty for another rank's stage. A copy to the host: for
    /// tests and checks (the noise scale against per-example gradients), never inside a run.
    std::vector<double> gradients(int stage) const;
    /// Pipedream / 2bw: the most old weight versions the stage held at once since resetStats().
    int maxStashedVersions(int stage) const;
    /// Parameters (elements) the stage holds; 0 for another rank's stage.
    std::int64_t parameterCount(int stage) const;
    /// Clears lag/drift statistics (memory peaks: MemoryTracker::resetPeaks()).
    void resetStats();
    /// Micro-batches forwarded but not yet fully backwarded, over all stages.
    std::size_t pendingCount() const;

    // Multi-process runs (runtime/train/dist): each process runs one stage; the tensors handed between
    // stages travel as HandOff values. Thread-safe (the hand-off lock).
    /// Removes and returns the tensor waiting for `toStage` (Activation: from toStage − 1 after a
    /// forward; Gradient: from toStage + 1 after B/I); nullopt when none is waiting. HostValues:
    /// copied into fp32 host values (Gloo); Tensor: the tensor itself, where it lives (NCCL sends
    /// it from the GPU, no host copy).
    std::optional<HandOff> takeHandOff(
        HandOffKind kind, int toStage, std::int64_t microbatch, HandOffForm form = HandOffForm::HostValues);
    /// Delivers a tensor that another process produced for `toStage`: host values are copied onto
    /// the stage's device; a HandOff tensor already there is used as it is (else copied there).
    void putHandOff(HandOffKind kind, int toStage, std::int64_t microbatch, const HandOff& value);
    /// How this model's hand-offs travelled so far (in memory and through takeHandOff/putHandOff).
    HandOffCounts handOffCounts() const;
    /// Told around each copy a receiving stage makes of the tensor its neighbour produced (between
    /// two GPUs, or a CPU clone; never a tensor passed as it is), on the receiver's thread inside
    /// its action, so a GPU profiler can tag the copy's GPU work as the sender's transfer.
    /// nullptr: nobody. The observer must outlive its use (or be replaced by nullptr first).
    void observeHandOffCopies(HandOffCopyObserver* observer);
    /// On: the last stage reads its targets from the token source itself and stage 0 keeps none
    /// for it (stage 0 runs in another process). Off (default): stage 0 hands them over in memory.
    void setTargetsFromTokens(bool on);

private:
    struct Impl;
    explicit PipelineModel(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

/// torch::set_num_threads: LibTorch intra-op threads for this process (n ≥ 1).
void setIntraOpThreads(int threads);
/// at::init_num_threads: applies the setIntraOpThreads() value to the calling thread, once per
/// thread and setIntraOpThreads() call (cheap to call before every action). With the OpenMP
/// backend the thread count is a per-thread setting, so a thread created after
/// setIntraOpThreads() (a threaded-driver stage) otherwise uses the library default (all cores).
void initIntraOpThreadsOnThisThread();

} // namespace bs::runtime
