#include "runtime/train/model/reference_trainer.h"

#include "runtime/train/model/device_p.h"
#include "runtime/train/model/gpt_modules_p.h"
#include "runtime/train/model/pipeline_model.h"
#include "runtime/train/model/torch_error.h"

#include <torch/optim/adamw.h>

#include <bubblescope/paci/lr_schedule.h>

#include <cmath>
#include <string>

namespace bs::runtime {

struct ReferenceTrainer::Impl
{
    ModelOptions options;
    TokenFn tokens;
    detail::GptStage model{nullptr};
    std::unique_ptr<torch::optim::AdamW> optimizer;
    int updates = 0;
};

ReferenceTrainer::ReferenceTrainer(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{}
ReferenceTrainer::ReferenceTrainer(ReferenceTrainer&&) noexcept = default;
ReferenceTrainer& ReferenceTrainer::operator=(ReferenceTrainer&&) noexcept = default;
ReferenceTrainer::~ReferenceTrainer() = default;

Result<ReferenceTrainer> ReferenceTrainer::create(const ModelOptions& options, TokenFn tokens)
{
    const GptShape& shape = options.shape;
    if (shape.dModel < 1 || shape.heads < 1 || shape.dModel % shape.heads != 0) {
        return makeError(
            ErrorCode::InvalidArgument, "model shape is invalid (d_model must be a multiple of heads)", "model");
    }
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    impl->tokens = std::move(tokens);
    try {
        const detail::ComputeScope onDevice(options.deviceOf(0), false);
        impl->model = detail::GptStage(shape, 0, shape.layers, true, true, options.seed);
        impl->model->train();
        impl->model->to(detail::torchDevice(options.deviceOf(0))); // same device and precision as stage 0
        std::vector<torch::Tensor> decay;
        std::vector<torch::Tensor> noDecay;
        for (const torch::Tensor& p : impl->model->parameters()) {
            (p.dim() >= 2 ? decay : noDecay).push_back(p);
        }
        const OptimizerOptions& o = options.optimizer;
        auto groupOptions = [&](double wd) {
            return std::make_unique<torch::optim::AdamWOptions>(
                torch::optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(wd));
        };
        std::vector<torch::optim::OptimizerParamGroup> groups;
        groups.emplace_back(decay, groupOptions(o.weightDecay));
        groups.emplace_back(noDecay, groupOptions(0.0));
        impl->optimizer = std::make_unique<torch::optim::AdamW>(std::move(groups));
    } catch (const std::exception& e) {
        return makeError(
            ErrorCode::Internal, std::string("building the reference model failed: ") + torchErrorText(e), "model");
    }
    return ReferenceTrainer(std::move(impl));
}

Result<double> ReferenceTrainer::trainBatch(std::int64_t firstMicrobatch, int microbatches)
{
    Impl& d = *m_impl;
    // As the pipeline's executor does before every action. Without it PyPI's LibTorch (MKL + OpenMP)
    // runs with MKL's and OpenMP's thread pools at different sizes and resizes the OpenMP pool
    // around every GEMM: --reference ran 9x slower than 1f1b on 2 loaded cores (BENCHMARKS.md).
    initIntraOpThreadsOnThisThread();
    const double scale = 1.0 / static_cast<double>(microbatches);
    double sum = 0.0;
    try {
        const detail::ComputeScope compute(d.options.deviceOf(0), d.options.bf16);
        const torch::Device device = detail::torchDevice(d.options.deviceOf(0));
        for (int i = 0; i < microbatches; ++i) {
            const std::int64_t mb = firstMicrobatch + i;
            Result<TokenBatch> batch = d.tokens(mb);
            if (!batch) {
                return batch.error();
            }
            const torch::Tensor x = detail::tokensToTensor(batch->inputs, batch->batch, batch->seq, device);
            const torch::Tensor y = detail::tokensToTensor(batch->targets, batch->batch, batch->seq, device);
            const torch::Tensor loss = detail::GptStageImpl::loss(d.model->forward(x), y);
            const double value = loss.item<double>();
            if (!std::isfinite(value)) {
                return makeError(ErrorCode::Diverged, "training diverged: the loss is " + std::to_string(value),
                    "reference / microbatch " + std::to_string(mb));
            }
            sum += value;
            (loss * scale).backward();
        }
        const OptimizerOptions& o = d.options.optimizer;
        const paci::LrSchedule schedule{o.lr, o.warmupSteps, o.totalSteps, o.minLrRatio};
        for (auto& group : d.optimizer->param_groups()) {
            static_cast<torch::optim::AdamWOptions&>(group.options()).lr(schedule.lrAt(d.updates));
        }
        d.optimizer->step();
        d.optimizer->zero_grad();
        d.updates += 1;
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("reference step failed: ") + torchErrorText(e), "reference");
    }
    return sum * scale;
}

Result<double> ReferenceTrainer::evaluate(const std::vector<TokenBatch>& batches)
{
    if (batches.empty()) {
        return makeError(ErrorCode::InvalidArgument, "no validation batches", "data.validation");
    }
    initIntraOpThreadsOnThisThread();
    torch::NoGradGuard noGrad;
    const detail::ComputeScope compute(m_impl->options.deviceOf(0), m_impl->options.bf16);
    const torch::Device device = detail::torchDevice(m_impl->options.deviceOf(0));
    m_impl->model->eval();
    double sum = 0.0;
    for (const TokenBatch& b : batches) {
        const torch::Tensor logits = m_impl->model->forward(detail::tokensToTensor(b.inputs, b.batch, b.seq, device));
        sum += detail::GptStageImpl::loss(logits, detail::tokensToTensor(b.targets, b.batch, b.seq, device))
                   .item<double>();
    }
    m_impl->model->train();
    return sum / static_cast<double>(batches.size());
}

std::int64_t ReferenceTrainer::parameterCount() const
{
    std::int64_t n = 0;
    for (const torch::Tensor& p : m_impl->model->parameters()) {
        n += p.numel();
    }
    return n;
}

} // namespace bs::runtime
