#pragma once
// Private to runtime/train/model (includes torch): the state behind PipelineModel, shared by
// pipeline_model.cpp (creation, reconfiguration, statistics, evaluation) and
// pipeline_model_steps.cpp (the F/B/I/W/U actions and the hand-offs between stages).

#include "runtime/train/model/device_memory.h"
#include "runtime/train/model/device_p.h"
#include "runtime/train/model/gpt_modules_p.h"
#include "runtime/train/model/noise_probe_p.h"
#include "runtime/train/model/pipeline_model.h"
#include "runtime/train/model/torch_error.h"

#include <ATen/CPUGeneratorImpl.h>

#include <bubblescope/paci/local_accumulator.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace bs::runtime {

namespace detail {

inline std::string where(int stage, std::int64_t mb)
{
    return "stage " + std::to_string(stage) + " / microbatch " + std::to_string(mb);
}

inline bool stashes(WeightPolicy policy)
{
    return policy == WeightPolicy::Stash || policy == WeightPolicy::TwoVersions;
}

// One micro-batch on one stage between its forward and the end of its backward.
struct Pending
{
    torch::Tensor input; // stage 0: token ids (B, T) int64; else the received activation, a leaf (B, T, C)
    torch::Tensor root; // where backward starts: the output (B, T, C), or the scaled loss on the last stage
    torch::Tensor outGrad; // gradient of `root` kept between I and W (undefined on the last stage)
    paci::ForwardTag tag;
    bool inputGradDone = false;
    // Activation recompute (ModelOptions::recompute): the forward ran under no-grad and kept only
    // `input`; the backward runs it again with grad (recomputeForward) and `root` exists from then.
    torch::Tensor targets; // last stage: the loss's targets, for the recomputed loss
    std::vector<RngState> rngStates; // recompute, dropout > 0: the generators' states before the forward
};

// A forward's tokens made on the host before its action's timer starts (prepareForward): the
// micro-batch as the token source gave it and, for a GPU stage, the int64 tensors staged in pinned
// memory (undefined on the CPU: the forward converts `batch` as before, inside its memory scope).
struct StagedTokens
{
    TokenBatch batch;
    torch::Tensor inputs; // stage 0's input ids, pinned (GPU stage 0 only)
    torch::Tensor targets; // the loss's targets, pinned (GPU last stage only)
};

// A tensor waiting in the mailbox for its receiving stage, and the stage whose memory scope
// allocated it (the producer in this process; the receiver itself for one put by a transport).
struct Parcel
{
    torch::Tensor tensor;
    int owner = -1;
};

struct StageState
{
    detail::GptStage module{nullptr};
    std::vector<torch::Tensor> params;
    std::unique_ptr<paci::LocalAccumulator> acc;
    std::map<std::int64_t, Pending> pending;
    std::map<int, std::vector<torch::Tensor>> stash; // weight version -> copy (stash policies)
    int maxStashed = 0;
    // Recompute drift: forwards recomputed, how many of them on a newer weight version than their
    // forward saw, and the most versions between a forward and its recompute.
    std::int64_t recomputes = 0;
    std::int64_t recomputesOnNewerWeights = 0;
    int maxRecomputeLag = 0;
    NoiseProbe noise; // the gradient noise scale on this stage's gradients (noise_probe_p.h)
};

// A check that some tensor still holds `t`'s storage (a weak reference: it keeps nothing alive).
inline std::function<bool()> aliveWhileHeld(const torch::Tensor& t)
{
    return [weak = t.storage().getWeakStorageImpl()] { return !weak.expired(); };
}

inline paci::AccumulatorOptions accumulatorOptions(const ModelOptions& o)
{
    paci::AccumulatorOptions a;
    a.accum = o.updateEvery;
    a.adamw = paci::AdamWOptions{o.optimizer.beta1, o.optimizer.beta2, o.optimizer.eps, o.optimizer.weightDecay};
    a.lr = paci::LrSchedule{o.optimizer.lr, o.optimizer.warmupSteps, o.optimizer.totalSteps, o.optimizer.minLrRatio,
        o.optimizer.updatesOffset};
    a.autoStep = false; // the schedule's U action applies the update (it has its own slot on the timeline)
    a.driftSampleEvery = o.driftSampleEvery;
    return a;
}

} // namespace detail

/// CPU stages: the CPU allocator wrapper's counters; CUDA stages: the device attribution
/// (device_memory.h) when a run installed one.
inline StageMemory stageMemory(int stage)
{
    DeviceMemoryAttributor* device = installedDeviceMemory();
    return device && device->deviceOf(stage) >= 0 ? device->stage(stage) : MemoryTracker::stage(stage);
}

struct PipelineModel::Impl
{
    ModelOptions options;
    TokenFn tokens;
    std::vector<detail::StageState> stages;
    using Mailbox = std::map<std::pair<int, std::int64_t>, detail::Parcel>; // (receiving stage, mb) -> (B, T, C)
    Mailbox activationsIn;
    Mailbox gradsIn;
    HandOffCounts handOffs; // how they travelled (guarded by `mailbox`)
    std::map<std::int64_t, torch::Tensor> targets; // mb -> (B, T) int64
    // Losses: the last stage's forward keeps each one on its device (lossesOnDevice); they are read
    // to the host in one transfer per batch (readLosses) into `losses`.
    std::map<std::int64_t, torch::Tensor> lossesOnDevice;
    std::map<std::int64_t, double> losses;
    std::int64_t lossReads = 0;
    double lossScale = 1.0;
    bool targetsFromTokens = false; // multi-process: the last stage fetches its own targets
    std::map<std::pair<int, std::int64_t>, detail::StagedTokens> staged; // (stage, mb): prepareForward's
    HandOffCopyObserver* copyObserver = nullptr; // told around receive()'s copies; set between runs only
    // Guards the hand-off maps above (activationsIn, gradsIn, targets, losses, lossesOnDevice, staged): with the
    // threaded driver, stages run concurrently and meet only here. Everything in StageState belongs to the one thread
    // that runs that stage.
    mutable std::mutex mailbox;

    int last() const { return static_cast<int>(stages.size()) - 1; }

    Result<detail::Pending*> pendingOf(int s, std::int64_t mb)
    {
        auto it = stages[static_cast<std::size_t>(s)].pending.find(mb);
        if (it == stages[static_cast<std::size_t>(s)].pending.end()) {
            return makeError(ErrorCode::Internal, "backward of a micro-batch that has no forward on this stage",
                detail::where(s, mb));
        }
        return &it->second;
    }

    // What the three backward passes (B, I, W) share: the micro-batch's pending forward, activation
    // memory accounting, and torch exceptions turned into an Error naming the pass, stage and
    // micro-batch. `body(stage, pending, info)` does the pass itself.
    template<typename Body>
    Result<StepInfo> backwardPass(int s, std::int64_t mb, const char* pass, Body&& body)
    {
        auto pending = pendingOf(s, mb);
        if (!pending) {
            return pending.error();
        }
        StepInfo info;
        try {
            // backward: autograd replays the forward's casts, each backward op on its forward op's
            // stream (the stage's), whichever thread (autograd's device thread on a GPU) runs it
            const detail::ComputeScope compute(options.deviceOf(s), false, s);
            const MemoryScope scope(s, MemoryCategory::Activations);
            if (Status done = body(stages[static_cast<std::size_t>(s)], **pending, info); !done) {
                return done.error();
            }
        } catch (const std::exception& e) {
            return makeError(
                ErrorCode::Internal, std::string(pass) + " failed: " + torchErrorText(e), detail::where(s, mb));
        }
        return info;
    }

    // The received tensor on the receiving stage's device (handOffRoute()): on the CPU a copy into
    // the stage's own buffer (what a real recv does, so the CPU tracker charges the receiver); on
    // the producer's GPU the producer's tensor itself, zero copy (the memory attribution learns that
    // two stages share it); from another GPU a device-to-device copy on the receiver's copy stream.
    Result<torch::Tensor> receive(Mailbox& box, int s, std::int64_t mb, const char* what)
    {
        const std::lock_guard<std::mutex> lock(mailbox);
        auto it = box.find({s, mb});
        if (it == box.end()) {
            return makeError(
                ErrorCode::Internal, std::string("no ") + what + " was sent to this stage", detail::where(s, mb));
        }
        detail::Parcel parcel = std::move(it->second);
        box.erase(it);
        const int to = options.deviceOf(s);
        const torch::Tensor& t = parcel.tensor;
        switch (handOffRoute(t.is_cuda() ? static_cast<int>(t.get_device()) : -1, to)) {
        case HandOffRoute::SameDevice:
            handOffs.sameDevice += 1;
            if (DeviceMemoryAttributor* memory = installedDeviceMemory();
                memory && parcel.owner != s && parcel.owner >= 0) {
                memory->shareBuffer(parcel.owner, MemoryCategory::Activations,
                    static_cast<std::int64_t>(t.storage().nbytes()), detail::aliveWhileHeld(t));
            }
            return std::move(parcel.tensor);
        case HandOffRoute::PeerCopy:
            handOffs.peerCopies += 1;
            break;
        case HandOffRoute::Clone:
            handOffs.cloned += 1;
            break;
        case HandOffRoute::HostStaged:
            handOffs.hostStaged += 1;
            break;
        }
        // The copy's GPU work is the sender's transfer (a Send tag), not the receiver's action.
        HandOffCopyObserver* observer = parcel.owner >= 0 && parcel.owner != s ? copyObserver : nullptr;
        if (observer) {
            observer->copyBegin(parcel.owner, s, mb);
        }
        torch::Tensor copy = detail::copyToDevice(t, to, parcel.owner, s);
        if (observer) {
            observer->copyEnd(parcel.owner, s, mb);
        }
        return copy;
    }

    // The gradient of stage s's output for micro-batch mb: received from stage s + 1, or undefined
    // on the last stage, whose backward starts from its loss.
    Result<torch::Tensor> outputGradient(int s, std::int64_t mb)
    {
        if (s == last()) {
            return torch::Tensor();
        }
        return receive(gradsIn, s, mb, "gradient");
    }

    // Stash policies: the backward of a micro-batch forwarded on an older version runs on that
    // version. Copies it into the live parameters; the returned copy of the current values goes back after.
    std::vector<torch::Tensor> swapIn(detail::StageState& st, int version, int s)
    {
        std::vector<torch::Tensor> current;
        if (!detail::stashes(options.weights) || version == st.acc->version()) {
            return current;
        }
        const MemoryScope scope(s, MemoryCategory::Stash);
        torch::NoGradGuard noGrad;
        const std::vector<torch::Tensor>& old = st.stash.at(version);
        for (std::size_t i = 0; i < st.params.size(); ++i) {
            current.push_back(st.params[i].detach().clone());
            st.params[i].data().copy_(old[i]); // data(): no version bump, pending graphs stay valid
        }
        return current;
    }

    static void swapOut(detail::StageState& st, std::vector<torch::Tensor>& current)
    {
        torch::NoGradGuard noGrad;
        for (std::size_t i = 0; i < current.size(); ++i) {
            st.params[i].data().copy_(current[i]);
        }
        current.clear();
    }

    static void dropUnusedStashes(detail::StageState& st)
    {
        for (auto it = st.stash.begin(); it != st.stash.end();) {
            bool used = false;
            for (const auto& [mb, p] : st.pending) {
                used = used || p.tag.version == it->first;
            }
            it = used ? std::next(it) : st.stash.erase(it);
        }
    }

    // Runs one backward pass (full, input-only or weight-only) of `p` on stage s.
    void runBackward(
        int s, detail::Pending& p, const torch::Tensor& grad, bool retain, const std::vector<torch::Tensor>& inputs)
    {
        if (inputs.empty() && !retain) {
            p.root.backward(grad);
        } else {
            p.root.backward(grad, retain, /*create_graph=*/false, inputs);
        }
        (void)s;
    }

    // Recompute: the forward of `p` again, with grad, on the weights the stage holds now (stash
    // policies: the forward's version, swapped in before this call). Under PACI's in-place updates
    // those may be newer than the forward's: counted as recompute drift. No-op when the forward
    // kept its graph.
    void recomputeForward(int s, detail::StageState& st, detail::Pending& p)
    {
        if (p.root.defined()) {
            return;
        }
        const detail::ComputeScope compute(options.deviceOf(s), options.bf16, s);
        // The same dropout masks as the forward drew: every generator dropout on this stage's
        // device draws from (the CUDA one on a GPU), set to its state before the forward.
        std::vector<detail::RngState> replayed;
        if (!p.rngStates.empty()) {
            replayed = detail::dropoutRngStates(options.deviceOf(s));
            detail::restoreRngStates(p.rngStates);
        }
        torch::Tensor out = st.module->forward(p.input);
        if (!replayed.empty()) {
            detail::restoreRngStates(replayed);
        }
        p.root = s == last() ? detail::GptStageImpl::loss(out, p.targets) * lossScale : out;
        p.targets = torch::Tensor();
        const int lag = detail::stashes(options.weights) ? 0 : st.acc->version() - p.tag.version;
        st.recomputes += 1;
        st.recomputesOnNewerWeights += lag > 0 ? 1 : 0;
        st.maxRecomputeLag = std::max(st.maxRecomputeLag, lag);
    }

    // After a backward pass that added to the stage's weight gradients, before the accumulator
    // counts it: the window's first one is the noise scale's small gradient.
    static void probeNoise(detail::StageState& st)
    {
        torch::NoGradGuard noGrad;
        const MemoryScope scope(-1, MemoryCategory::Other); // instrumentation
        st.noise.afterBackward(st.params, st.acc->backwardsSinceUpdate(), st.acc->accum());
    }

    void sendInputGrad(int s, std::int64_t mb, detail::Pending& p, StepInfo& info)
    {
        if (s == 0) {
            return;
        }
        torch::Tensor g = p.input.grad(); // (B, T, C)
        info.sendBytes = static_cast<std::int64_t>(g.nbytes());
        const std::lock_guard<std::mutex> lock(mailbox);
        gradsIn[{s - 1, mb}] = detail::Parcel{g, s};
    }
};

} // namespace bs::runtime
