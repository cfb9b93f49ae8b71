#pragma once
// The training executor: performs each scheduled action on the real LibTorch stages and reports
// its measured duration, so the scheduler core's per-stage clocks show the timeline p devices
// would produce, with real compute, on one machine. Durations come from each stage's ActionTimer
// (device_timer.h): steady_clock on the CPU (the default), CUDA events on a GPU stage. Torch-free
// header: the tensors live in PipelineModel. Driven by bs::runtime::drive(); it has no event loop.

#include "runtime/plan/sim/executor.h"
#include "runtime/train/exec/kernel_tags.h"
#include "runtime/train/model/device_timer.h"
#include "runtime/train/model/pipeline_model.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace bs::runtime {

class TensorExecutor final : public ActionExecutor
{
public:
    /// `model` must outlive the executor. `microbatchOffset` is added to every action's
    /// micro-batch id (a run continued in chunks keeps global ids). `commNs`: modelled transfer
    /// time per message (0 on one process: tensors are handed over in memory).
    explicit TensorExecutor(PipelineModel& model, std::int64_t microbatchOffset = 0, TimeNs commNs = 0);
    ~TensorExecutor() override;
    TensorExecutor(const TensorExecutor&) = delete;
    TensorExecutor& operator=(const TensorExecutor&) = delete;

    /// Safe to call concurrently for different stages (driveThreaded). Applies the process's
    /// intra-op thread count to the calling thread first (initIntraOpThreadsOnThisThread). An
    /// overlapped F&B pair (DualPipeV) runs its forward, then its backward: its duration is both,
    /// forwardShare the forward's.
    Result<ActionOutcome> perform(const Action& action) override;
    TimeNs commTime(int fromStage, int toStage, std::int64_t bytes) const override;

    void setMicrobatchOffset(std::int64_t offset) { m_offset = offset; }
    /// The trace's stage of each model stage (Schedule::rankOfStage: interleaved and V placements
    /// put several stages on one rank's lane; empty = the same). Kernel tags carry it, so they
    /// match the action events the scheduler core writes. Call before useDevices().
    void setTraceStages(std::vector<int> traceStageOf) { m_traceStageOf = std::move(traceStageOf); }

    /// Times stage s with `timers[s]` (size = stages; replaces the host timers) and, when `tags`
    /// is set, brackets every action with tags->actionBegin/actionEnd and every hand-off copy the
    /// model makes inside an action with tags->transferBegin/transferEnd (a Send tag: the copy is
    /// the sender's transfer, PipelineModel::observeHandOffCopies). Stages that share a device
    /// (`stageDevice[s]`, −1 = CPU, equal ≥ 0 values share) take turns on it: perform() holds the
    /// device's lock for the action, so under the threaded driver one action runs on a device at
    /// a time and its timing and memory attribution are its own.
    Status useDevices(
        std::vector<std::unique_ptr<ActionTimer>> timers, const std::vector<int>& stageDevice, KernelTagSink* tags);
    /// Sum of measured action durations so far (ns), over all stages.
    TimeNs busyTime() const { return m_busy.load(); }

private:
    Result<ActionOutcome> performPlain(const Action& action);
    Result<StepInfo> run(const Action& action, std::int64_t mb);

    PipelineModel& m_model;
    std::int64_t m_offset;
    TimeNs m_commNs;
    std::vector<std::unique_ptr<ActionTimer>> m_timers; // per stage
    std::vector<int> m_turnOf; // per stage: index into m_turns, −1 = none
    std::vector<std::unique_ptr<std::mutex>> m_turns; // one per CUDA device shared by stages
    KernelTagSink* m_tags = nullptr;
    // The model's hand-off copies -> Send tags on m_tags (trace stages).
    class CopyTags final : public HandOffCopyObserver
    {
    public:
        explicit CopyTags(TensorExecutor& e)
            : m_e(e)
        {}
        void copyBegin(int fromStage, int toStage, std::int64_t microbatch) override;
        void copyEnd(int fromStage, int toStage, std::int64_t microbatch) override;

    private:
        profiler::cupti::ActionTag tagOf(int fromStage, int toStage, std::int64_t microbatch) const;
        TensorExecutor& m_e;
    };
    CopyTags m_copyTags{*this};
    bool m_observing = false; // m_copyTags installed in m_model
    std::vector<int> m_traceStageOf; // model stage -> trace stage (rank); empty = identity
    int traceStage(int stage) const
    {
        return m_traceStageOf.empty() ? stage : m_traceStageOf[static_cast<std::size_t>(stage)];
    }
    std::atomic<TimeNs> m_busy{0}; // perform() runs concurrently for different stages (driveThreaded)
};

} // namespace bs::runtime
