// A few-stage pipeline trainer in one process, written the usual way: 1F1B with a flush at the end
// of every global batch, then one synchronous optimizer step per stage. paci_trainer.cpp is the
// same program with the synchronizer replaced by bs::paci::LocalAccumulator (see README.md).
#include <torch/nn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <vector>

#include "flush_synchronizer.h"

namespace {

constexpr int kStages = 4; // p
constexpr int kMicrobatches = 4; // m micro-batches per global batch
constexpr int kBatch = 16; // sequences per micro-batch
constexpr int kWidth = 32;
constexpr int kClasses = 8;
constexpr double kLr = 1e-2;

// One micro-batch in flight: every stage's input (a leaf) and output, plus the loss.
struct InFlight
{
    std::vector<torch::Tensor> inputs, outputs;
    torch::Tensor loss;
};

// Synthetic task: the label is the arg-max of a fixed random projection of the input.
struct Data
{
    torch::Tensor projection = torch::randn({kWidth, kClasses});
    std::pair<torch::Tensor, torch::Tensor> next()
    {
        torch::Tensor x = torch::randn({kBatch, kWidth});
        return {x, x.mm(projection).argmax(1)};
    }
};

std::vector<torch::nn::Sequential> buildStages()
{
    std::vector<torch::nn::Sequential> stages;
    for (int s = 0; s < kStages; ++s) {
        torch::nn::Sequential net(torch::nn::Linear(kWidth, kWidth), torch::nn::GELU());
        if (s == kStages - 1) {
            net->push_back(torch::nn::Linear(kWidth, kClasses));
        }
        stages.push_back(net);
    }
    return stages;
}

} // namespace

int main(int argc, char** argv)
{
    const int steps = argc > 1 ? std::atoi(argv[1]) : 40;
    torch::manual_seed(0);
    std::vector<torch::nn::Sequential> stages = buildStages();
    std::vector<std::unique_ptr<FlushSynchronizer>> sync;
    for (auto& stage : stages) {
        sync.push_back(std::make_unique<FlushSynchronizer>(stage->parameters(), kLr, kMicrobatches));
    }
    Data data;
    std::deque<InFlight> inflight;

    auto forwardAll = [&] {
        auto [x, labels] = data.next();
        InFlight mb;
        torch::Tensor act = x;
        for (int s = 0; s < kStages; ++s) {
            mb.inputs.push_back(act.detach().requires_grad_(s > 0)); // what stage s received
            mb.outputs.push_back(stages[s]->forward(mb.inputs.back()));
            act = mb.outputs.back();
        }
        mb.loss = torch::nn::functional::cross_entropy(act, labels);
        inflight.push_back(std::move(mb));
    };
    auto backwardOldest = [&] {
        InFlight mb = std::move(inflight.front());
        inflight.pop_front();
        torch::Tensor grad;
        for (int s = kStages - 1; s >= 0; --s) {
            if (s == kStages - 1) {
                (mb.loss * sync[s]->lossScale()).backward();
            } else {
                mb.outputs[s].backward(grad);
            }
            grad = mb.inputs[s].grad(); // sent to stage s - 1
            sync[s]->afterBackward();
        }
    };

    double first = 0.0, last = 0.0;
    for (int step = 0; step < steps; ++step) {
        double lossSum = 0.0;
        for (int i = 0; i < kMicrobatches; ++i) {
            forwardAll();
            lossSum += inflight.back().loss.item<double>();
            if (static_cast<int>(inflight.size()) == kStages) { // 1F1B steady state: p in flight
                backwardOldest();
            }
        }
        while (!inflight.empty()) { // the flush: drain the pipeline ...
            backwardOldest();
        }
        for (auto& s : sync) { // ... then update every stage at once
            s->afterFlush();
        }
        last = lossSum / kMicrobatches;
        first = step == 0 ? last : first;
        std::printf("step %3d  loss %.4f\n", step, last);
    }
    std::printf("loss %.4f -> %.4f\n", first, last);
    return std::isfinite(last) ? 0 : 1;
}
