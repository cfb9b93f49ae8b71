#include "runtime/model/pipeline_model.h"

#include "runtime/model/device_memory.h"
#include "runtime/model/device_p.h"
#include "runtime/model/gpt_modules_p.h"

#include <ATen/Parallel.h>

#include <bubblescope/paci/local_accumulator.h>

#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace bs::runtime {

namespace {

std::string where(int stage, std::int64_t mb)
{
    return "stage " + std::to_string(stage) + " / microbatch " + std::to_string(mb);
}

bool stashes(WeightPolicy policy)
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
};

struct StageState
{
    detail::GptStage module{nullptr};
    std::vector<torch::Tensor> params;
    std::unique_ptr<paci::LocalAccumulator> acc;
    std::map<std::int64_t, Pending> pending;
    std::map<int, std::vector<torch::Tensor>> stash; // weight version -> copy (stash policies)
    int maxStashed = 0;
};

paci::AccumulatorOptions accumulatorOptions(const ModelOptions& o)
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

// CPU stages: the CPU allocator wrapper's counters; CUDA stages: the device attribution
// (device_memory.h) when a run installed one.
StageMemory stageMemory(int stage)
{
    DeviceMemoryAttributor* device = installedDeviceMemory();
    return device && device->deviceOf(stage) >= 0 ? device->stage(stage) : MemoryTracker::stage(stage);
}

} // namespace

struct PipelineModel::Impl
{
    ModelOptions options;
    TokenFn tokens;
    std::vector<StageState> stages;
    std::map<std::pair<int, std::int64_t>, torch::Tensor> activationsIn; // (receiving stage, mb) -> (B, T, C)
    std::map<std::pair<int, std::int64_t>, torch::Tensor> gradsIn; // (receiving stage, mb) -> (B, T, C)
    std::map<std::int64_t, torch::Tensor> targets; // mb -> (B, T) int64
    std::map<std::int64_t, double> losses;
    double lossScale = 1.0;
    bool targetsFromTokens = false; // multi-process: the last stage fetches its own targets
    // Guards the hand-off maps above (activationsIn, gradsIn, targets, losses): with the threaded
    // driver, stages run concurrently and meet only here. Everything in StageState belongs to the
    // one thread that runs that stage.
    mutable std::mutex mailbox;

    int last() const { return static_cast<int>(stages.size()) - 1; }

    Result<Pending*> pendingOf(int s, std::int64_t mb)
    {
        auto it = stages[static_cast<std::size_t>(s)].pending.find(mb);
        if (it == stages[static_cast<std::size_t>(s)].pending.end()) {
            return makeError(
                ErrorCode::Internal, "backward of a micro-batch that has no forward on this stage", where(s, mb));
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
            const detail::ComputeScope compute(options.deviceOf(s), false); // backward: autograd replays the forward's casts
            const MemoryScope scope(s, MemoryCategory::Activations);
            if (Status done = body(stages[static_cast<std::size_t>(s)], **pending, info); !done) {
                return done.error();
            }
        } catch (const std::exception& e) {
            return makeError(ErrorCode::Internal, std::string(pass) + " failed: " + e.what(), where(s, mb));
        }
        return info;
    }

    // The received tensor, copied into the receiving stage's own buffer (what a real recv does).
    Result<torch::Tensor> receive(std::map<std::pair<int, std::int64_t>, torch::Tensor>& box, int s,
                                  std::int64_t mb, const char* what)
    {
        const std::lock_guard<std::mutex> lock(mailbox);
        auto it = box.find({s, mb});
        if (it == box.end()) {
            return makeError(ErrorCode::Internal, std::string("no ") + what + " was sent to this stage", where(s, mb));
        }
        // A copy on the receiving stage's device (clone when it is the sender's).
        torch::Tensor t = it->second.to(it->second.options().device(detail::torchDevice(options.deviceOf(s))),
                                        /*non_blocking=*/false, /*copy=*/true);
        box.erase(it);
        return t;
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
    std::vector<torch::Tensor> swapIn(StageState& st, int version, int s)
    {
        std::vector<torch::Tensor> current;
        if (!stashes(options.weights) || version == st.acc->version()) {
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

    static void swapOut(StageState& st, std::vector<torch::Tensor>& current)
    {
        torch::NoGradGuard noGrad;
        for (std::size_t i = 0; i < current.size(); ++i) {
            st.params[i].data().copy_(current[i]);
        }
        current.clear();
    }

    static void dropUnusedStashes(StageState& st)
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
        int s, Pending& p, const torch::Tensor& grad, bool retain, const std::vector<torch::Tensor>& inputs)
    {
        if (inputs.empty() && !retain) {
            p.root.backward(grad);
        } else {
            p.root.backward(grad, retain, /*create_graph=*/false, inputs);
        }
        (void)s;
    }

    void sendInputGrad(int s, std::int64_t mb, Pending& p, StepInfo& info)
    {
        if (s == 0) {
            return;
        }
        torch::Tensor g = p.input.grad(); // (B, T, C)
        info.sendBytes = static_cast<std::int64_t>(g.nbytes());
        const std::lock_guard<std::mutex> lock(mailbox);
        gradsIn[{s - 1, mb}] = g;
    }
};

PipelineModel::PipelineModel(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{}
PipelineModel::PipelineModel(PipelineModel&&) noexcept = default;
PipelineModel& PipelineModel::operator=(PipelineModel&&) noexcept = default;
PipelineModel::~PipelineModel() = default;

Result<PipelineModel> PipelineModel::create(const ModelOptions& options, TokenFn tokens)
{
    const GptShape& shape = options.shape;
    if (shape.layers < 0 || shape.dModel < 1 || shape.heads < 1 || shape.dModel % shape.heads != 0 || shape.seqLen < 1
        || shape.vocab < 2) {
        return makeError(
            ErrorCode::InvalidArgument, "model shape is invalid (d_model must be a multiple of heads)", "model");
    }
    if (options.stages < 1 || options.stages > MemoryTracker::kMaxStages) {
        return makeError(ErrorCode::InvalidArgument, "stages must be in [1, 64]", "pipeline.stages");
    }
    if (options.updateEvery < 1 || options.microBatchSize < 1) {
        return makeError(ErrorCode::InvalidArgument, "update window and micro-batch size must be >= 1", "pipeline");
    }
    if (options.onlyStage < -1 || options.onlyStage >= options.stages) {
        return makeError(ErrorCode::InvalidArgument, "the stage to build must be -1 (all) or in [0, stages)", "model");
    }
    auto partition = partitionLayers(shape, options.stages, options.microBatchSize, options.layersPerStage);
    if (!partition) {
        return partition.error();
    }
    MemoryTracker::install();
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    impl->tokens = std::move(tokens);
    impl->lossScale = 1.0 / static_cast<double>(options.updateEvery);
    try {
        for (int s = 0; s < options.stages; ++s) {
            const auto i = static_cast<std::size_t>(s);
            const detail::ComputeScope onDevice(options.deviceOf(s), false);
            StageState st;
            if (options.onlyStage >= 0 && s != options.onlyStage) {
                impl->stages.push_back(std::move(st)); // another rank's stage: an empty slot
                continue;
            }
            {
                const MemoryScope scope(s, MemoryCategory::Parameters);
                st.module = detail::GptStage(shape, partition->firstLayer[i], partition->layerCount[i], s == 0,
                    s == options.stages - 1, options.seed);
                st.module->train();
                st.module->to(detail::torchDevice(options.deviceOf(s))); // fp32 master weights on the stage's device
                st.params = st.module->parameters();
            }
            {
                const MemoryScope scope(s, MemoryCategory::Gradients);
                for (torch::Tensor& p : st.params) {
                    p.mutable_grad() = torch::zeros_like(p); // allocated once; accumulated in place
                }
            }
            {
                const MemoryScope scope(s, MemoryCategory::OptimizerState);
                st.acc = std::make_unique<paci::LocalAccumulator>(st.params, accumulatorOptions(options));
            }
            impl->stages.push_back(std::move(st));
        }
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("building the model failed: ") + e.what(), "model");
    }
    return PipelineModel(std::move(impl));
}

Status PipelineModel::reconfigure(const ModelOptions& options)
{
    Impl& d = *m_impl;
    const ModelOptions& now = d.options;
    if (options.stages != now.stages || options.shape.layers != now.shape.layers
        || options.shape.dModel != now.shape.dModel || options.shape.heads != now.shape.heads
        || options.shape.seqLen != now.shape.seqLen || options.shape.vocab != now.shape.vocab) {
        return makeError(ErrorCode::InvalidArgument, "the model's stages and shape cannot change in a running model",
                         "pipeline.stages / model");
    }
    if (options.updateEvery < 1 || options.microBatchSize < 1) {
        return makeError(ErrorCode::InvalidArgument, "update window and micro-batch size must be >= 1", "pipeline");
    }
    if (pendingCount() != 0) {
        return makeError(ErrorCode::Internal, "reconfigure with micro-batches in flight",
                         std::to_string(pendingCount()) + " pending");
    }
    for (int s = 0; s < stages(); ++s) {
        const auto& acc = d.stages[static_cast<std::size_t>(s)].acc;
        if (acc && acc->backwardsSinceUpdate() != 0) {
            return makeError(ErrorCode::Internal, "reconfigure with gradients not yet applied",
                             "stage " + std::to_string(s));
        }
    }
    const paci::AccumulatorOptions acc = accumulatorOptions(options);
    try {
        for (auto& st : d.stages) {
            if (!st.acc) {
                continue; // another rank's stage
            }
            st.acc->reconfigure(acc);
            st.stash.clear(); // nothing pending: no old version is needed
        }
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("reconfigure failed: ") + e.what(), "model");
    }
    const std::vector<int> layers = d.options.layersPerStage; // the partition stays: the weights live there
    const int onlyStage = d.options.onlyStage;
    d.options = options;
    d.options.layersPerStage = layers;
    d.options.onlyStage = onlyStage;
    d.lossScale = 1.0 / static_cast<double>(options.updateEvery);
    return ok();
}

int PipelineModel::stages() const
{
    return static_cast<int>(m_impl->stages.size());
}
const ModelOptions& PipelineModel::options() const
{
    return m_impl->options;
}

Result<StepInfo> PipelineModel::forward(int s, std::int64_t mb)
{
    Impl& d = *m_impl;
    StageState& st = d.stages[static_cast<std::size_t>(s)];
    StepInfo info;
    const std::int64_t before = stageMemory(s).liveOf(MemoryCategory::Activations);
    try {
        const detail::ComputeScope compute(d.options.deviceOf(s), d.options.bf16);
        Pending p;
        {
            const MemoryScope scope(-1, MemoryCategory::Other); // drift snapshots are instrumentation
            p.tag = st.acc->tagForward(mb);
        }
        const MemoryScope scope(s, MemoryCategory::Activations);
        if (s == 0) {
            Result<TokenBatch> batch = d.tokens(mb);
            if (!batch) {
                return batch.error();
            }
            const auto n = static_cast<std::size_t>(batch->batch) * static_cast<std::size_t>(batch->seq);
            if (batch->seq != d.options.shape.seqLen || batch->inputs.size() != n || batch->targets.size() != n) {
                return makeError(
                    ErrorCode::InvalidArgument, "micro-batch has the wrong shape for the model", where(s, mb));
            }
            p.input = detail::tokensToTensor(batch->inputs, batch->batch, batch->seq, detail::torchDevice(d.options.deviceOf(s)));
            if (!d.targetsFromTokens || s == d.last()) {
                const MemoryScope targetScope(d.last(), MemoryCategory::Activations);
                torch::Tensor targets = detail::tokensToTensor(batch->targets, batch->batch, batch->seq,
                                                               detail::torchDevice(d.options.deviceOf(d.last())));
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
        torch::Tensor out = st.module->forward(p.input);
        if (s == d.last()) {
            torch::Tensor targets;
            if (d.targetsFromTokens && s != 0) {
                Result<TokenBatch> batch = d.tokens(mb);
                if (!batch) {
                    return batch.error();
                }
                targets = detail::tokensToTensor(batch->targets, batch->batch, batch->seq,
                                                 detail::torchDevice(d.options.deviceOf(s)));
            } else {
                const std::lock_guard<std::mutex> lock(d.mailbox);
                auto t = d.targets.find(mb);
                if (t == d.targets.end()) {
                    return makeError(ErrorCode::Internal, "no targets for this micro-batch", where(s, mb));
                }
                targets = std::move(t->second);
                d.targets.erase(t);
            }
            const torch::Tensor loss = detail::GptStageImpl::loss(out, targets);
            const double value = loss.item<double>();
            if (!std::isfinite(value)) {
                return makeError(
                    ErrorCode::Diverged, "training diverged: the loss is " + std::to_string(value), where(s, mb));
            }
            {
                const std::lock_guard<std::mutex> lock(d.mailbox);
                d.losses[mb] = value;
            }
            p.root = loss * d.lossScale;
        } else {
            p.root = out;
            info.sendBytes = static_cast<std::int64_t>(out.nbytes());
            torch::Tensor sent = out.detach();
            const std::lock_guard<std::mutex> lock(d.mailbox);
            d.activationsIn[{s + 1, mb}] = std::move(sent);
        }
        st.pending[mb] = std::move(p);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("forward failed: ") + e.what(), where(s, mb));
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
        st.acc->observeBackward(p.tag);
        d.runBackward(s, p, *grad, false, {});
        Impl::swapOut(st, current);
        d.sendInputGrad(s, mb, p, info);
        st.pending.erase(mb);
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
        const detail::ComputeScope onDevice(d.options.deviceOf(s), false);
        {
            torch::NoGradGuard noGrad;
            const MemoryScope scope(-1, MemoryCategory::Other);
            double sum = 0.0;
            for (const torch::Tensor& p : st.params) {
                sum += p.grad().sum().item<double>();
            }
            if (!std::isfinite(sum)) {
                return makeError(ErrorCode::Diverged, "training diverged: non-finite gradients", at);
            }
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
        return makeError(ErrorCode::Internal, std::string("update failed: ") + e.what(), at);
    }
    return ok();
}

std::optional<HandOff> PipelineModel::takeHandOff(HandOffKind kind, int toStage, std::int64_t microbatch)
{
    Impl& d = *m_impl;
    torch::Tensor t;
    {
        const std::lock_guard<std::mutex> lock(d.mailbox);
        auto& box = kind == HandOffKind::Activation ? d.activationsIn : d.gradsIn;
        auto it = box.find({toStage, microbatch});
        if (it == box.end()) {
            return std::nullopt;
        }
        t = std::move(it->second);
        box.erase(it);
    }
    const MemoryScope scope(-1, MemoryCategory::Other);
    t = t.to(torch::kCPU, torch::kFloat32).contiguous();
    HandOff out;
    out.shape = t.sizes().vec();
    const float* p = t.data_ptr<float>();
    out.values.assign(p, p + t.numel());
    return out;
}

void PipelineModel::putHandOff(HandOffKind kind, int toStage, std::int64_t microbatch, const HandOff& value)
{
    Impl& d = *m_impl;
    torch::Tensor t;
    {
        const MemoryScope scope(toStage, MemoryCategory::Activations);
        t = torch::from_blob(const_cast<float*>(value.values.data()), value.shape, torch::kFloat32)
                .to(detail::torchDevice(d.options.deviceOf(toStage)), torch::kFloat32, false, /*copy=*/true);
    }
    const std::lock_guard<std::mutex> lock(d.mailbox);
    (kind == HandOffKind::Activation ? d.activationsIn : d.gradsIn)[{toStage, microbatch}] = std::move(t);
}

void PipelineModel::setTargetsFromTokens(bool on) { m_impl->targetsFromTokens = on; }

std::optional<double> PipelineModel::loss(std::int64_t microbatch) const
{
    const std::lock_guard<std::mutex> lock(m_impl->mailbox);
    auto it = m_impl->losses.find(microbatch);
    if (it == m_impl->losses.end()) {
        return std::nullopt;
    }
    return it->second;
}

Result<double> PipelineModel::evaluate(const std::vector<TokenBatch>& batches)
{
    if (batches.empty()) {
        return makeError(ErrorCode::InvalidArgument, "no validation batches", "data.validation");
    }
    if (m_impl->options.onlyStage >= 0 && m_impl->stages.size() > 1) {
        return makeError(ErrorCode::InvalidArgument, "this process holds one stage only; validation needs every stage",
                         "validation");
    }
    try {
        torch::NoGradGuard noGrad;
        const MemoryScope scope(-1, MemoryCategory::Other);
        double sum = 0.0;
        for (auto& st : m_impl->stages) {
            st.module->eval();
        }
        const ModelOptions& o = m_impl->options;
        for (const TokenBatch& b : batches) {
            torch::Tensor x = detail::tokensToTensor(b.inputs, b.batch, b.seq);
            for (int s = 0; s < stages(); ++s) {
                const detail::ComputeScope compute(o.deviceOf(s), o.bf16);
                x = m_impl->stages[static_cast<std::size_t>(s)].module->forward(x.to(detail::torchDevice(o.deviceOf(s))));
            }
            const torch::Tensor targets = detail::tokensToTensor(b.targets, b.batch, b.seq, x.device());
            sum += detail::GptStageImpl::loss(x, targets).item<double>();
        }
        for (auto& st : m_impl->stages) {
            st.module->train();
        }
        return sum / static_cast<double>(batches.size());
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("evaluation failed: ") + e.what(), "validation");
    }
}

int PipelineModel::version(int stage) const
{
    const StageState& st = m_impl->stages[static_cast<std::size_t>(stage)];
    return st.acc ? st.acc->version() : 0;
}

StageStats PipelineModel::stageStats(int stage) const
{
    const StageState& st = m_impl->stages[static_cast<std::size_t>(stage)];
    StageStats out;
    if (!st.acc) { // another rank's stage
        return out;
    }
    out.version = st.acc->version();
    const paci::DriftStats& ds = st.acc->stats();
    out.lagHistogram = ds.lagHistogram;
    out.maxLag = ds.maxLag;
    out.driftSamples = ds.driftSamples;
    out.meanDrift = ds.meanDrift();
    out.maxDrift = ds.driftMax;
    out.maxStashedVersions = st.maxStashed;
    for (const torch::Tensor& p : st.params) {
        out.parameterCount += p.numel();
    }
    out.memory = stageMemory(stage);
    return out;
}

void PipelineModel::resetStats()
{
    for (auto& st : m_impl->stages) {
        if (!st.acc) {
            continue;
        }
        st.acc->resetStats();
        st.maxStashed = static_cast<int>(st.stash.size());
    }
}

std::size_t PipelineModel::pendingCount() const
{
    std::size_t n = 0;
    for (const auto& st : m_impl->stages) {
        n += st.pending.size();
    }
    return n;
}

namespace {
std::atomic<int> g_threadsGeneration{0}; // bumped by setIntraOpThreads: threads re-apply the count
} // namespace

void setIntraOpThreads(int threads)
{
    if (threads >= 1) {
        at::set_num_threads(threads);
        g_threadsGeneration.fetch_add(1);
    }
}

void initIntraOpThreadsOnThisThread()
{
    thread_local int applied = -1;
    const int generation = g_threadsGeneration.load();
    if (applied != generation) {
        at::init_num_threads();
        applied = generation;
    }
}

} // namespace bs::runtime
