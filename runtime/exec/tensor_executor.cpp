#include "runtime/exec/tensor_executor.h"

#include <chrono>

namespace bs::runtime {

TensorExecutor::TensorExecutor(PipelineModel& model, std::int64_t microbatchOffset, TimeNs commNs)
    : m_model(model)
    , m_offset(microbatchOffset)
    , m_commNs(commNs)
{}

Result<ActionOutcome> TensorExecutor::perform(const Action& action)
{
    if (action.stage < 0 || action.stage >= m_model.stages()) {
        return makeError(ErrorCode::InvalidArgument, "action names a stage the model does not have", toString(action));
    }
    initIntraOpThreadsOnThisThread(); // a stage thread of driveThreaded starts with OpenMP's default
    const std::int64_t mb = m_offset + action.microbatch;
    const auto start = std::chrono::steady_clock::now();
    Result<StepInfo> info = StepInfo{};
    switch (action.kind) {
    case ActionKind::Forward:
        info = m_model.forward(action.stage, mb);
        break;
    case ActionKind::Backward:
        info = m_model.backward(action.stage, mb);
        break;
    case ActionKind::BackwardInput:
        info = m_model.backwardInput(action.stage, mb);
        break;
    case ActionKind::BackwardWeight:
        info = m_model.backwardWeight(action.stage, mb);
        break;
    case ActionKind::Update: {
        const Status s = m_model.update(action.stage, action.lastMb - action.firstMb + 1);
        if (!s) {
            return s.error();
        }
        break;
    }
    }
    const auto end = std::chrono::steady_clock::now();
    if (!info) {
        Error e = info.error();
        e.context = e.context.empty() ? toString(action) : e.context + ", action " + toString(action);
        return e;
    }
    ActionOutcome out;
    out.duration = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
    out.bytes = info->activationBytes;
    out.sendBytes = info->sendBytes;
    m_busy += out.duration;
    return out;
}

TimeNs TensorExecutor::commTime(int fromStage, int toStage, std::int64_t bytes) const
{
    (void)fromStage;
    (void)toStage;
    (void)bytes;
    return m_commNs;
}

} // namespace bs::runtime
