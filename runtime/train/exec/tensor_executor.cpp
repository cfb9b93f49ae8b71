#include "runtime/train/exec/tensor_executor.h"

#include "runtime/plan/sim/scheduler_core.h"

#include <algorithm>
#include <map>

namespace bs::runtime {

TensorExecutor::TensorExecutor(PipelineModel& model, std::int64_t microbatchOffset, TimeNs commNs)
    : m_model(model)
    , m_offset(microbatchOffset)
    , m_commNs(commNs)
{
    for (int s = 0; s < model.stages(); ++s) {
        m_timers.push_back(makeHostTimer());
        m_turnOf.push_back(-1);
    }
}

TensorExecutor::~TensorExecutor()
{
    if (m_observing) {
        m_model.observeHandOffCopies(nullptr);
    }
}

profiler::cupti::ActionTag TensorExecutor::CopyTags::tagOf(int fromStage, int toStage, std::int64_t microbatch) const
{
    profiler::cupti::ActionTag tag;
    tag.stage = m_e.traceStage(fromStage);
    tag.kind = profiler::EventKind::Send;
    tag.microbatch = static_cast<int>(microbatch);
    tag.version = m_e.traceStage(toStage); // a Send tag's version field is its destination
    return tag;
}

void TensorExecutor::CopyTags::copyBegin(int fromStage, int toStage, std::int64_t microbatch)
{
    if (m_e.m_tags) {
        m_e.m_tags->transferBegin(tagOf(fromStage, toStage, microbatch));
    }
}

void TensorExecutor::CopyTags::copyEnd(int fromStage, int toStage, std::int64_t microbatch)
{
    if (m_e.m_tags) {
        m_e.m_tags->transferEnd(tagOf(fromStage, toStage, microbatch));
    }
}

Status TensorExecutor::useDevices(
    std::vector<std::unique_ptr<ActionTimer>> timers, const std::vector<int>& stageDevice, KernelTagSink* tags)
{
    const auto stages = static_cast<std::size_t>(m_model.stages());
    if (timers.size() != stages || stageDevice.size() != stages) {
        return makeError(
            ErrorCode::InvalidArgument, "one timer and one device per stage", "stages " + std::to_string(stages));
    }
    std::map<int, int> turnOfDevice;
    for (std::size_t s = 0; s < stages; ++s) {
        if (!timers[s]) {
            return makeError(ErrorCode::InvalidArgument, "missing timer", "stage " + std::to_string(s));
        }
        const int device = stageDevice[s];
        m_turnOf[s] = -1;
        if (device >= 0) {
            auto [it, fresh] = turnOfDevice.emplace(device, static_cast<int>(m_turns.size()));
            if (fresh) {
                m_turns.push_back(std::make_unique<std::mutex>());
            }
            m_turnOf[s] = it->second;
        }
    }
    if (!m_traceStageOf.empty() && m_traceStageOf.size() != stages) {
        return makeError(ErrorCode::InvalidArgument, "one trace stage per stage", "stages " + std::to_string(stages));
    }
    m_timers = std::move(timers);
    m_tags = tags;
    m_model.observeHandOffCopies(m_tags ? &m_copyTags : nullptr);
    m_observing = m_tags != nullptr;
    if (m_tags) {
        for (std::size_t s = 0; s < stages; ++s) {
            if (void* stream = stageDevice[s] >= 0 ? stageStreamHandle(stageDevice[s], static_cast<int>(s)) : nullptr) {
                m_tags->bindStage(traceStage(static_cast<int>(s)), stageDevice[s], stream);
            }
        }
    }
    return ok();
}

Result<StepInfo> TensorExecutor::run(const Action& action, std::int64_t mb)
{
    switch (action.kind) {
    case ActionKind::Forward:
        return m_model.forward(action.stage, mb);
    case ActionKind::Backward:
        return m_model.backward(action.stage, mb);
    case ActionKind::BackwardInput:
        return m_model.backwardInput(action.stage, mb);
    case ActionKind::BackwardWeight:
        return m_model.backwardWeight(action.stage, mb);
    case ActionKind::Update: {
        const Status s = m_model.update(action.stage, action.lastMb - action.firstMb + 1);
        if (!s) {
            return s.error();
        }
        return StepInfo{};
    }
    case ActionKind::OverlapForwardBackward: // perform() runs its halves one after the other
        return makeError(ErrorCode::Internal, "an overlapped pair is performed as its two halves", toString(action));
    }
    return StepInfo{};
}

Result<ActionOutcome> TensorExecutor::perform(const Action& action)
{
    if (!action.isOverlap()) {
        return performPlain(action);
    }
    // DualPipeV's overlapped F&B pair on one device: the forward half, then the backward half, each
    // timed on its stage's timer; the action's measured time is their sum, the trace draws the
    // forward's share first (ActionOutcome::forwardShare). On one stream nothing overlaps: the pair
    // costs F + B here; its benefit (hiding one half's communication behind the other's compute)
    // needs two streams, which the cost model's StageCost::overlapped describes.
    Result<ActionOutcome> first = performPlain(action.forwardHalf());
    if (!first) {
        return first.error();
    }
    Result<ActionOutcome> second = performPlain(action.backwardHalf());
    if (!second) {
        return second.error();
    }
    ActionOutcome out;
    out.duration = first->duration + second->duration;
    out.forwardShare = first->duration;
    out.bytes = first->bytes;
    out.sendBytes = std::max(first->sendBytes, second->sendBytes); // one hidden-state tensor each way
    return out;
}

Result<ActionOutcome> TensorExecutor::performPlain(const Action& action)
{
    if (action.stage < 0 || action.stage >= m_model.stages()) {
        return makeError(ErrorCode::InvalidArgument, "action names a stage the model does not have", toString(action));
    }
    initIntraOpThreadsOnThisThread(); // a stage thread of driveThreaded starts with OpenMP's default
    const auto stage = static_cast<std::size_t>(action.stage);
    const std::int64_t mb = m_offset + action.microbatch;
    std::unique_lock<std::mutex> turn;
    if (m_turnOf[stage] >= 0) {
        turn = std::unique_lock<std::mutex>(*m_turns[static_cast<std::size_t>(m_turnOf[stage])]);
    }
    ActionTimer& timer = *m_timers[stage];
    if (action.kind == ActionKind::Forward) {
        // Host work that is no part of the action's time (stage 0's tokens): before its timer and
        // its tag window, so a GPU stage's start event is not recorded while the host still works.
        // Inside the device's turn all the same: its memory scope must not split another stage's.
        if (Status prepared = m_model.prepareForward(action.stage, mb); !prepared) {
            Error e = prepared.error();
            e.context = e.context.empty() ? toString(action) : e.context + ", action " + toString(action);
            return e;
        }
    }
    profiler::cupti::ActionTag tag;
    if (m_tags) {
        // The same (stage, kind, micro-batch, version) the driver writes into the action's event:
        // its stage is the trace's (the rank, under interleaved and V placements).
        tag.stage = traceStage(action.stage);
        tag.kind = toEventKind(action.kind);
        tag.microbatch = static_cast<int>(action.kind == ActionKind::Update ? action.microbatch : mb);
        tag.version = m_model.version(action.stage);
        m_tags->actionBegin(tag, hostNowNs());
    }
    timer.begin();
    Result<StepInfo> info = run(action, mb);
    Result<TimeNs> duration = timer.end();
    if (m_tags) {
        m_tags->actionEnd(tag, hostNowNs());
    }
    if (!info) {
        Error e = info.error();
        e.context = e.context.empty() ? toString(action) : e.context + ", action " + toString(action);
        return e;
    }
    if (!duration) {
        return duration.error();
    }
    ActionOutcome out;
    out.duration = *duration;
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
