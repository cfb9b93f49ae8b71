#pragma once
// What the tensor executor tells a GPU profiler around each action: the tag of the action that is
// about to issue GPU work (CUPTI external correlation: stage, kind, micro-batch, weight version)
// and where on the host clock it began; then that it ended. The CUPTI side (gpu_trace.h) turns
// the kernels recorded under the tag into kernel-lane events under the action's stage.

#include "base/time.h"
#include "profiler/cupti/action_tag.h"

namespace bs::runtime {

class KernelTagSink
{
public:
    virtual ~KernelTagSink() = default;
    /// `hostBeginNs`: steady-clock ns since its epoch when the action began (hostNowNs()).
    /// Called from the thread that issues the action's work; stages may call concurrently.
    virtual void actionBegin(const profiler::cupti::ActionTag& tag, TimeNs hostBeginNs) = 0;
    /// The action's work is done on the GPU (the executor's timer waited for its end event).
    virtual void actionEnd(const profiler::cupti::ActionTag& tag, TimeNs hostEndNs) = 0;
    /// Around a hand-off copy inside an action (on that action's thread, nested in its
    /// actionBegin/actionEnd): `send` (kind Send, stage = the sender's trace stage, version = the
    /// receiver's trace stage, the micro-batch) tags the copy's GPU work as the sender's transfer.
    virtual void transferBegin(const profiler::cupti::ActionTag& /*send*/) {}
    virtual void transferEnd(const profiler::cupti::ActionTag& /*send*/) {}
    /// Trace stage `stage`'s GPU work runs on `stream` (a cudaStream_t) of CUDA device `device`.
    virtual void bindStage(int /*stage*/, int /*device*/, void* /*stream*/) {}
};

} // namespace bs::runtime
