#pragma once
// The training executor: performs each scheduled action on the real LibTorch stages and reports
// its measured duration (steady_clock), so the scheduler core's per-stage clocks show the timeline
// p devices would produce, with real compute, on one machine. Torch-free header: the tensors live
// in PipelineModel. Driven by bs::runtime::drive(); it has no event loop of its own.

#include "runtime/model/pipeline_model.h"
#include "runtime/sim/executor.h"

#include <atomic>

namespace bs::runtime {

class TensorExecutor final : public ActionExecutor
{
public:
    /// `model` must outlive the executor. `microbatchOffset` is added to every action's
    /// micro-batch id (a run continued in chunks keeps global ids). `commNs`: modelled transfer
    /// time per message (0 on one process: tensors are handed over in memory).
    explicit TensorExecutor(PipelineModel& model, std::int64_t microbatchOffset = 0, TimeNs commNs = 0);

    /// Safe to call concurrently for different stages (driveThreaded). Applies the process's
    /// intra-op thread count to the calling thread first (initIntraOpThreadsOnThisThread).
    Result<ActionOutcome> perform(const Action& action) override;
    TimeNs commTime(int fromStage, int toStage, std::int64_t bytes) const override;

    void setMicrobatchOffset(std::int64_t offset) { m_offset = offset; }
    /// Sum of measured action durations so far (ns), over all stages.
    TimeNs busyTime() const { return m_busy.load(); }

private:
    PipelineModel& m_model;
    std::int64_t m_offset;
    TimeNs m_commNs;
    std::atomic<TimeNs> m_busy{0}; // perform() runs concurrently for different stages (driveThreaded)
};

} // namespace bs::runtime
