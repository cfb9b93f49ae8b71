#include "runtime/train/model/pipeline_model.h"

#include "runtime/train/model/pipeline_model_p.h"
#include "runtime/train/model/torch_error.h"

#include <ATen/Parallel.h>

#include <atomic>
#include <cmath>

namespace bs::runtime {

using namespace detail;

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
    for (int held : options.heldStages) {
        if (held < 0 || held >= options.stages) {
            return makeError(ErrorCode::InvalidArgument, "a stage to build must be in [0, stages)", "model");
        }
    }
    auto partition = options.unitsPerStage.empty()
        ? partitionLayers(shape, options.stages, options.microBatchSize, options.layersPerStage)
        : partitionFromUnits(shape, options.stages, options.unitsPerStage);
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
            st.noise = detail::NoiseProbe(s);
            if (!options.holds(s)) {
                impl->stages.push_back(std::move(st)); // another rank's stage: an empty slot
                continue;
            }
            {
                const MemoryScope scope(s, MemoryCategory::Parameters);
                st.module = detail::GptStage(shape, partition->firstLayer[i], partition->layerCount[i], s == 0,
                    s == options.stages - 1, options.seed, s == partition->finalNormStage);
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
        return makeError(ErrorCode::Internal, std::string("building the model failed: ") + torchErrorText(e), "model");
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
            return makeError(
                ErrorCode::Internal, "reconfigure with gradients not yet applied", "stage " + std::to_string(s));
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
            st.noise.restart();
        }
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("reconfigure failed: ") + torchErrorText(e), "model");
    }
    const std::vector<int> layers = d.options.layersPerStage; // the partition stays: the weights live there
    const std::vector<int> units = d.options.unitsPerStage;
    const int onlyStage = d.options.onlyStage;
    const std::vector<int> heldStages = d.options.heldStages;
    const std::vector<int> devices = d.options.stageDevice; // the tensors live there
    const bool bf16 = d.options.bf16;
    d.options = options;
    d.options.layersPerStage = layers;
    d.options.unitsPerStage = units;
    d.options.onlyStage = onlyStage;
    d.options.heldStages = heldStages;
    d.options.stageDevice = devices;
    d.options.bf16 = bf16;
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
void PipelineModel::setTargetsFromTokens(bool on)
{
    m_impl->targetsFromTokens = on;
}
void PipelineModel::observeHandOffCopies(HandOffCopyObserver* observer)
{
    m_impl->copyObserver = observer;
}

Result<double> PipelineModel::evaluate(const std::vector<TokenBatch>& batches)
{
    if (batches.empty()) {
        return makeError(ErrorCode::InvalidArgument, "no validation batches", "data.validation");
    }
    if (!m_impl->options.holdsEveryStage() && m_impl->stages.size() > 1) {
        return makeError(ErrorCode::InvalidArgument,
            "this process holds some stages only; validation needs every stage", "validation");
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
                x = m_impl->stages[static_cast<std::size_t>(s)].module->forward(
                    x.to(detail::torchDevice(o.deviceOf(s))));
            }
            const torch::Tensor targets = detail::tokensToTensor(b.targets, b.batch, b.seq, x.device());
            sum += detail::GptStageImpl::loss(x, targets).item<double>();
        }
        for (auto& st : m_impl->stages) {
            st.module->train();
        }
        return sum / static_cast<double>(batches.size());
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("evaluation failed: ") + torchErrorText(e), "validation");
    }
}

int PipelineModel::version(int stage) const
{
    const StageState& st = m_impl->stages[static_cast<std::size_t>(stage)];
    return st.acc ? st.acc->version() : 0;
}

StageMetrics PipelineModel::stageMetrics(int stage) const
{
    const StageState& st = m_impl->stages[static_cast<std::size_t>(stage)];
    StageMetrics out;
    out.stage = stage;
    if (!st.acc) { // another rank's stage
        return out;
    }
    out.version = st.acc->version();
    const StageMemory mem = stageMemory(stage);
    out.paramBytes = mem.liveOf(MemoryCategory::Parameters);
    out.gradBytes = mem.liveOf(MemoryCategory::Gradients);
    out.optimizerBytes = mem.liveOf(MemoryCategory::OptimizerState);
    out.stashBytes = mem.liveOf(MemoryCategory::Stash);
    out.activationBytes = mem.liveOf(MemoryCategory::Activations);
    out.peakBytes = mem.peakTotal;
    out.peakActivationBytes = mem.peakOf(MemoryCategory::Activations);
    out.peakStashBytes = mem.peakOf(MemoryCategory::Stash);
    out.peakReservedBytes = mem.peakReserved;
    const paci::DriftStats& ds = st.acc->stats();
    out.lagHistogram = ds.lagHistogram;
    out.maxLag = ds.maxLag;
    out.driftSamples = ds.driftSamples;
    out.meanDrift = ds.meanDrift();
    out.maxDrift = ds.driftMax;
    out.recomputes = st.recomputes;
    out.recomputesOnNewerWeights = st.recomputesOnNewerWeights;
    out.maxRecomputeLag = st.maxRecomputeLag;
    return out;
}

std::optional<StageNoiseScale> PipelineModel::noiseScale(int stage) const
{
    const StageState& st = m_impl->stages[static_cast<std::size_t>(stage)];
    if (!st.acc || st.noise.averager().updates() == 0) {
        return std::nullopt;
    }
    return st.noise.averager().estimate();
}

std::vector<double> PipelineModel::gradients(int stage) const
{
    const StageState& st = m_impl->stages[static_cast<std::size_t>(stage)];
    std::vector<double> out;
    torch::NoGradGuard noGrad;
    for (const torch::Tensor& p : st.acc ? st.params : std::vector<torch::Tensor>{}) {
        const torch::Tensor g = p.grad().defined() ? p.grad() : torch::zeros_like(p);
        const torch::Tensor host = g.detach().to(torch::kCPU, torch::kFloat64).contiguous().flatten();
        out.insert(out.end(), host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
    }
    return out;
}

int PipelineModel::maxStashedVersions(int stage) const
{
    return m_impl->stages[static_cast<std::size_t>(stage)].maxStashed;
}

std::int64_t PipelineModel::parameterCount(int stage) const
{
    const StageState& st = m_impl->stages[static_cast<std::size_t>(stage)];
    std::int64_t n = 0;
    for (const torch::Tensor& p : st.acc ? st.params : std::vector<torch::Tensor>{}) {
        n += p.numel();
    }
    return n;
}

void PipelineModel::resetStats()
{
    for (auto& st : m_impl->stages) {
        if (!st.acc) {
            continue;
        }
        st.acc->resetStats();
        st.maxStashed = static_cast<int>(st.stash.size());
        st.recomputes = 0;
        st.recomputesOnNewerWeights = 0;
        st.maxRecomputeLag = 0;
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
