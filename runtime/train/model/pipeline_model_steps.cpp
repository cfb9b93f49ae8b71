// PipelineModel's actions: forward, the three backward passes, the update, and the tensors handed
// between stages (in memory, or to and from a StageTransport for multi-process runs).
#include "runtime/train/model/hand_off_tensor_p.h"
#include "runtime/train/model/pipeline_model.h"
#include "runtime/train/model/pipeline_model_p.h"
#include "runtime/train/model/torch_error.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <optional>

namespace bs::runtime {

using namespace detail;

Status PipelineModel::prepareForward(int s, std::int64_t mb)
{
    Impl& d = *m_impl;
    const bool inputs = s == 0;
    const bool ownTargets = d.targetsFromTokens && s == d.last() && s != 0;
    if (!inputs && !ownTargets) {
        return ok();
    }
    {
        const std::lock_guard<std::mutex> lock(d.mailbox);
        if (d.staged.count({s, mb}) != 0) {
            return ok();
        }
    }
    Result<TokenBatch> batch = d.tokens(mb);
    if (!batch) {
        return batch.error();
    }
    const auto n = static_cast<std::size_t>(batch->batch) * static_cast<std::size_t>(batch->seq);
    if (batch->seq != d.options.shape.seqLen || (inputs && batch->inputs.size() != n) || batch->targets.size() != n) {
        return makeError(ErrorCode::InvalidArgument, "micro-batch has the wrong shape for the model", where(s, mb));
    }
    StagedTokens staged;
    try {
        const MemoryScope none(-1, MemoryCategory::Other); // pinned host memory is no stage's
        const int device = d.options.deviceOf(s);
        if (device >= 0 && inputs) {
            staged.inputs =
                detail::stagedForCopy(detail::tokensToTensor(batch->inputs, batch->batch, batch->seq), device);
        }
        const int targetDevice = d.options.deviceOf(d.last());
        if (targetDevice >= 0 && (ownTargets || !d.targetsFromTokens || s == d.last())) {
            staged.targets =
                detail::stagedForCopy(detail::tokensToTensor(batch->targets, batch->batch, batch->seq), targetDevice);
        }
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("staging tokens failed: ") + torchErrorText(e), where(s, mb));
    }
    staged.batch = std::move(*batch);
    const std::lock_guard<std::mutex> lock(d.mailbox);
    d.staged[{s, mb}] = std::move(staged);
    return ok();
}

// Token ids on `device`: the staged pinned tensor copied without the host waiting, else (a CPU
// stage) converted from the host vector in the caller's memory scope, as the forward always did.
static torch::Tensor tokensOn(
    const torch::Tensor& pinned, const std::vector<std::int32_t>& ids, const TokenBatch& b, int device)
{
    if (pinned.defined()) {
        return pinned.to(detail::torchDevice(device), /*non_blocking=*/true);
    }
    return detail::tokensToTensor(ids, b.batch, b.seq, detail::torchDevice(device));
}

Result<StepInfo> PipelineModel::forward(int s, std::int64_t mb)
{
    Impl& d = *m_impl;
    // The tokens prepareForward() staged for this forward, taken out (staged now if nobody did).
    const auto takeStaged = [&]() -> Result<StagedTokens> {
        if (Status prepared = prepareForward(s, mb); !prepared) {
            return prepared.error();
        }
        const std::lock_guard<std::mutex> lock(d.mailbox);
        auto it = d.staged.find({s, mb});
        StagedTokens out = std::move(it->second);
        d.staged.erase(it);
        return out;
    };
    StageState& st = d.stages[static_cast<std::size_t>(s)];
    StepInfo info;
    const std::int64_t before = stageMemory(s).liveOf(MemoryCategory::Activations);
    try {
        const detail::ComputeScope compute(d.options.deviceOf(s), d.options.bf16, s);
        Pending p;
        {
            const MemoryScope scope(-1, MemoryCategory::Other); // drift snapshots are instrumentation
            p.tag = st.acc->tagForward(mb);
        }
        const MemoryScope scope(s, MemoryCategory::Activations);
        const bool recompute = d.options.recompute; // keep the input only; the backward recomputes
        if (recompute && d.options.shape.dropout > 0.0) {
            p.rngStates = detail::dropoutRngStates(d.options.deviceOf(s));
        }
        if (s == 0) {
            Result<StagedTokens> staged = takeStaged();
            if (!staged) {
                return staged.error();
            }
            const TokenBatch& batch = staged->batch;
            p.input = tokensOn(staged->inputs, batch.inputs, batch, d.options.deviceOf(s));
            if (!d.targetsFromTokens || s == d.last()) {
                const MemoryScope targetScope(d.last(), MemoryCategory::Activations);
                torch::Tensor targets = tokensOn(staged->targets, batch.targets, batch, d.options.deviceOf(d.last()));
                const std::lock_guard<std::mutex> lock(d.mailbox);
                d.targets[mb] = std::move(targets);
            }
        } else {
            auto received = d.receive(d.activationsIn, s, mb, "activation");
            if (!received) {
                return received.error();
            }
            p.input = received->requires_grad_(true);
        }
        torch::Tensor out;
        {
            std::optional<torch::NoGradGuard> noGrad;
            if (recompute) {
                noGrad.emplace();
            }
            out = st.module->forward(p.input);
        }
        if (s == d.last()) {
            torch::Tensor targets;
            if (d.targetsFromTokens && s != 0) {
                Result<StagedTokens> staged = takeStaged();
                if (!staged) {
                    return staged.error();
                }
                targets = tokensOn(staged->targets, staged->batch.targets, staged->batch, d.options.deviceOf(s));
            } else {
                const std::lock_guard<std::mutex> lock(d.mailbox);
                auto t = d.targets.find(mb);
                if (t == d.targets.end()) {
                    return makeError(ErrorCode::Internal, "no targets for this micro-batch", where(s, mb));
                }
                targets = std::move(t->second);
                d.targets.erase(t);
            }
            std::optional<torch::NoGradGuard> noGrad;
            if (recompute) {
                noGrad.emplace();
                p.targets = targets;
            }
            const torch::Tensor loss = detail::GptStageImpl::loss(out, targets);
            // Kept on the device, read once per batch (readLosses): a .item() here would make the
            // host wait for the whole forward inside every last-stage action. The copy is nobody's
            // memory (the CPU tracker then sees the stage's tensors exactly as before).
            torch::Tensor kept;
            {
                const MemoryScope none(-1, MemoryCategory::Other);
                kept = loss.detach().clone();
            }
            {
                const std::lock_guard<std::mutex> lock(d.mailbox);
                d.lossesOnDevice[mb] = std::move(kept);
            }
            if (!recompute) {
                p.root = loss * d.lossScale;
            }
        } else {
            if (!recompute) {
                p.root = out;
            }
            info.sendBytes = static_cast<std::int64_t>(out.nbytes());
            torch::Tensor sent = out.detach();
            const std::lock_guard<std::mutex> lock(d.mailbox);
            d.activationsIn[{s + 1, mb}] = Parcel{std::move(sent), s};
        }
        st.pending[mb] = std::move(p);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("forward failed: ") + torchErrorText(e), where(s, mb));
    }
    info.activationBytes = stageMemory(s).liveOf(MemoryCategory::Activations) - before;
    return info;
}

Result<StepInfo> PipelineModel::backward(int s, std::int64_t mb)
{
    Impl& d = *m_impl;
    return d.backwardPass(s, mb, "backward", [&](StageState& st, Pending& p, StepInfo& info) -> Status {
        auto grad = d.outputGradient(s, mb);
        if (!grad) {
            return grad.error();
        }
        std::vector<torch::Tensor> current = d.swapIn(st, p.tag.version, s);
        d.recomputeForward(s, st, p);
        st.acc->observeBackward(p.tag);
        d.runBackward(s, p, *grad, false, {});
        Impl::swapOut(st, current);
        d.sendInputGrad(s, mb, p, info);
        st.pending.erase(mb);
        Impl::probeNoise(st);
        st.acc->afterBackward();
        Impl::dropUnusedStashes(st);
        return ok();
    });
}

Result<StepInfo> PipelineModel::backwardInput(int s, std::int64_t mb)
{
    Impl& d = *m_impl;
    if (stashes(d.options.weights)) {
        return makeError(
            ErrorCode::InvalidArgument, "split backward is not supported with weight stashing", where(s, mb));
    }
    return d.backwardPass(s, mb, "input-gradient pass", [&](StageState& st, Pending& p, StepInfo& info) -> Status {
        auto grad = d.outputGradient(s, mb);
        if (!grad) {
            return grad.error();
        }
        p.outGrad = *grad;
        d.recomputeForward(s, st, p); // W reuses the graph the input-gradient pass keeps
        st.acc->observeBackward(p.tag);
        if (s > 0) { // stage 0's input is token ids: no input gradient to compute
            d.runBackward(s, p, p.outGrad, true, {p.input});
        }
        d.sendInputGrad(s, mb, p, info);
        p.inputGradDone = true;
        return ok();
    });
}

Result<StepInfo> PipelineModel::backwardWeight(int s, std::int64_t mb)
{
    Impl& d = *m_impl;
    return d.backwardPass(s, mb, "weight-gradient pass", [&](StageState& st, Pending& p, StepInfo&) -> Status {
        if (!p.inputGradDone) {
            return makeError(ErrorCode::Internal, "weight-gradient pass before the input-gradient pass", where(s, mb));
        }
        if (!st.params.empty()) {
            d.runBackward(s, p, p.outGrad, false, st.params);
        }
        st.pending.erase(mb);
        Impl::probeNoise(st);
        st.acc->afterBackward();
        return ok();
    });
}

Status PipelineModel::update(int s, int microbatches)
{
    Impl& d = *m_impl;
    StageState& st = d.stages[static_cast<std::size_t>(s)];
    const std::string at = "stage " + std::to_string(s) + " / update " + std::to_string(st.acc->version());
    if (st.acc->backwardsSinceUpdate() != microbatches) {
        return makeError(ErrorCode::Internal,
            "update applies " + std::to_string(microbatches) + " micro-batches but "
                + std::to_string(st.acc->backwardsSinceUpdate()) + " backward passes completed",
            at);
    }
    try {
        const detail::ComputeScope onDevice(d.options.deviceOf(s), false, s);
        {
            torch::NoGradGuard noGrad;
            const MemoryScope scope(-1, MemoryCategory::Other);
            // One host read for the whole stage (on a GPU each .item() is a synchronisation): the
            // gradients' squared norm (non-finite when any gradient is) and the noise probe's norms.
            std::vector<torch::Tensor> reads{gradSquaredNorm(st.params)};
            st.noise.appendReads(st.params, reads);
            const torch::Tensor host = torch::stack(reads).to(torch::kCPU).contiguous();
            const double* values = host.data_ptr<double>();
            if (!std::isfinite(values[0])) {
                return makeError(ErrorCode::Diverged, "training diverged: non-finite gradients", at);
            }
            st.noise.record(st.params, values, d.lossScale, microbatches, d.options.microBatchSize);
        }
        if (stashes(d.options.weights)) {
            const int v = st.acc->version();
            bool needed = false;
            for (const auto& [mb, p] : st.pending) {
                needed = needed || p.tag.version == v;
            }
            if (needed) {
                const MemoryScope scope(s, MemoryCategory::Stash);
                torch::NoGradGuard noGrad;
                std::vector<torch::Tensor> copy;
                for (const torch::Tensor& p : st.params) {
                    copy.push_back(p.detach().clone());
                }
                st.stash[v] = std::move(copy);
                st.maxStashed = std::max(st.maxStashed, static_cast<int>(st.stash.size()));
            }
        }
        const MemoryScope scope(s, MemoryCategory::OptimizerState); // AdamW's temporaries
        st.acc->step();
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("update failed: ") + torchErrorText(e), at);
    }
    return ok();
}

std::optional<HandOff> PipelineModel::takeHandOff(
    HandOffKind kind, int toStage, std::int64_t microbatch, HandOffForm form)
{
    Impl& d = *m_impl;
    Parcel parcel;
    {
        const std::lock_guard<std::mutex> lock(d.mailbox);
        auto& box = kind == HandOffKind::Activation ? d.activationsIn : d.gradsIn;
        auto it = box.find({toStage, microbatch});
        if (it == box.end()) {
            return std::nullopt;
        }
        parcel = std::move(it->second);
        box.erase(it);
    }
    // Frees of the producer's tensor below happen in its (the producer's) memory scope.
    const MemoryScope owner(parcel.owner, MemoryCategory::Activations);
    if (form == HandOffForm::Tensor) {
        const std::lock_guard<std::mutex> lock(d.mailbox);
        d.handOffs.tensorsPassed += 1;
        return handOffOf(std::move(parcel.tensor));
    }
    torch::Tensor t;
    {
        const MemoryScope scope(-1, MemoryCategory::Other);
        t = parcel.tensor.to(torch::kCPU, torch::kFloat32).contiguous();
    }
    parcel.tensor = torch::Tensor();
    HandOff out;
    out.shape = t.sizes().vec();
    const float* p = t.data_ptr<float>();
    out.values.assign(p, p + t.numel());
    const std::lock_guard<std::mutex> lock(d.mailbox);
    d.handOffs.hostStaged += 1;
    return out;
}

void PipelineModel::putHandOff(HandOffKind kind, int toStage, std::int64_t microbatch, const HandOff& value)
{
    Impl& d = *m_impl;
    const torch::Device device = detail::torchDevice(d.options.deviceOf(toStage));
    torch::Tensor t;
    bool staged = true;
    {
        const MemoryScope scope(toStage, MemoryCategory::Activations);
        if (value.tensor) { // a transport's tensor: used as it is when it is on this stage's device
            t = value.tensor->tensor;
            staged = t.device() != device && (t.device().is_cpu() || device.is_cpu());
            if (t.device() != device) {
                t = detail::copyToDevice(t, d.options.deviceOf(toStage), -1, toStage);
            }
        } else {
            t = torch::from_blob(const_cast<float*>(value.values.data()), value.shape, torch::kFloat32)
                    .to(device, torch::kFloat32, false, /*copy=*/true);
        }
    }
    const std::lock_guard<std::mutex> lock(d.mailbox);
    if (value.tensor) {
        d.handOffs.tensorsPassed += 1;
    }
    d.handOffs.hostStaged += staged ? 1 : 0;
    (kind == HandOffKind::Activation ? d.activationsIn : d.gradsIn)[{toStage, microbatch}] =
        Parcel{std::move(t), toStage};
}

std::vector<std::optional<double>> PipelineModel::readLosses(std::int64_t first, int count) const
{
    Impl& d = *m_impl;
    const std::lock_guard<std::mutex> lock(d.mailbox);
    std::vector<std::int64_t> ids;
    std::vector<torch::Tensor> onDevice;
    for (std::int64_t mb = first; mb < first + count; ++mb) {
        if (auto it = d.lossesOnDevice.find(mb); it != d.lossesOnDevice.end()) {
            ids.push_back(mb);
            onDevice.push_back(it->second);
        }
    }
    if (!onDevice.empty()) {
        try {
            const MemoryScope none(-1, MemoryCategory::Other);
            // One transfer (the one host synchronisation) for the batch; float -> double as item<double>() did.
            const torch::Tensor host = torch::stack(onDevice).to(torch::kCPU).to(torch::kFloat64).contiguous();
            const double* v = host.data_ptr<double>();
            for (std::size_t i = 0; i < ids.size(); ++i) {
                d.losses[ids[i]] = v[i];
                d.lossesOnDevice.erase(ids[i]);
            }
            d.lossReads += 1;
        } catch (const std::exception&) {
            // A failed device read leaves the losses unknown (NaN in the metrics); the device's own
            // error surfaces in the next action.
        }
    }
    std::vector<std::optional<double>> out;
    for (std::int64_t mb = first; mb < first + count; ++mb) {
        auto it = d.losses.find(mb);
        out.push_back(it == d.losses.end() ? std::nullopt : std::optional<double>(it->second));
    }
    return out;
}

std::optional<double> PipelineModel::loss(std::int64_t microbatch) const
{
    return readLosses(microbatch, 1).front();
}

std::int64_t PipelineModel::lossReads() const
{
    const std::lock_guard<std::mutex> lock(m_impl->mailbox);
    return m_impl->lossReads;
}

HandOffCounts PipelineModel::handOffCounts() const
{
    const std::lock_guard<std::mutex> lock(m_impl->mailbox);
    return m_impl->handOffs;
}

} // namespace bs::runtime
