#include "bubblescope/paci/local_accumulator.h"

#include <ATen/ATen.h>
#include <torch/optim/adamw.h>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using bs::paci::AccumulatorOptions;
using bs::paci::LocalAccumulator;

at::Tensor leaf(at::Tensor t)
{
    return t.set_requires_grad(true);
}

double maxAbsDiff(const at::Tensor& a, const at::Tensor& b)
{
    return (a - b).abs().max().item<double>();
}

AccumulatorOptions options(int accum, double lr = 1e-2)
{
    AccumulatorOptions o;
    o.accum = accum;
    o.lr.peakLr = lr;
    return o;
}

TEST(LocalAccumulator, StepsExactlyAfterBackwardA2A3A)
{
    at::manual_seed(1);
    at::Tensor w = leaf(at::randn({3, 3}));
    LocalAccumulator acc({w}, options(3));
    for (int n = 1; n <= 10; ++n) {
        const at::Tensor before = w.detach().clone();
        (w.sum() * acc.lossScale()).backward();
        const bool stepped = acc.afterBackward();
        EXPECT_EQ(stepped, n % 3 == 0) << "backward " << n;
        EXPECT_EQ(acc.version(), n / 3) << "backward " << n;
        EXPECT_EQ(acc.backwardsSinceUpdate(), n % 3);
        EXPECT_EQ(maxAbsDiff(before, w.detach()) > 0.0, n % 3 == 0) << "weights move only on an update";
        if (n % 3 == 0) {
            EXPECT_EQ(w.grad().abs().sum().item<double>(), 0.0) << "gradients zeroed after the update";
        }
    }
}

TEST(LocalAccumulator, ReconfigureChangesTheWindowOnlyBetweenWindows)
{
    at::manual_seed(1);
    at::Tensor w = leaf(at::randn({3, 3}));
    LocalAccumulator acc({w}, options(3));
    (w.sum() * acc.lossScale()).backward();
    acc.afterBackward();
    EXPECT_THROW(acc.reconfigure(options(2)), std::invalid_argument) << "a window is open";
    (w.sum() * acc.lossScale()).backward();
    acc.afterBackward();
    (w.sum() * acc.lossScale()).backward();
    EXPECT_TRUE(acc.afterBackward());
    EXPECT_EQ(acc.version(), 1);
    acc.reconfigure(options(2));
    EXPECT_EQ(acc.accum(), 2);
    EXPECT_EQ(acc.version(), 1) << "version and state continue";
    EXPECT_DOUBLE_EQ(acc.lossScale(), 0.5);
    (w.sum() * acc.lossScale()).backward();
    EXPECT_FALSE(acc.afterBackward());
    (w.sum() * acc.lossScale()).backward();
    EXPECT_TRUE(acc.afterBackward()) << "the new window of 2";
    EXPECT_EQ(acc.version(), 2);
    EXPECT_THROW(acc.reconfigure(options(0)), std::invalid_argument);
}

TEST(LocalAccumulator, WithoutAutoStepOnlyCountsUntilStep)
{
    at::Tensor w = leaf(at::ones({2, 2}));
    AccumulatorOptions o = options(2);
    o.autoStep = false;
    LocalAccumulator acc({w}, o);
    w.sum().backward();
    EXPECT_FALSE(acc.afterBackward());
    w.sum().backward();
    EXPECT_TRUE(acc.afterBackward());
    EXPECT_TRUE(acc.updateDue());
    EXPECT_EQ(acc.version(), 0);
    acc.step();
    EXPECT_EQ(acc.version(), 1);
    EXPECT_FALSE(acc.updateDue());
}

// Micro-batch 0's forward runs at version 0, an update happens (micro-batch 1 completes the
// window), then micro-batch 0's backward runs. It must succeed, read saved activations at their
// forward-time values and saved parameters at their updated values.
TEST(LocalAccumulator, LateBackwardReadsOldActivationsAndNewWeights)
{
    at::manual_seed(2);
    at::Tensor w1 = leaf(at::randn({5, 4}));
    at::Tensor w2 = leaf(at::randn({3, 5}));
    LocalAccumulator acc({w1, w2}, options(1, 0.1));

    at::Tensor x0 = leaf(at::randn({2, 4}));
    at::Tensor h0 = at::mm(x0, w1.t()); // (2,5): saved by the second mm for w2's gradient
    at::Tensor y0 = at::mm(h0, w2.t()); // (2,3)
    const at::Tensor hOld = h0.detach().clone();

    at::Tensor x1 = at::randn({2, 4});
    at::mm(at::mm(x1, w1.t()), w2.t()).sum().backward();
    ASSERT_TRUE(acc.afterBackward()); // a = 1: update applied, version 1
    ASSERT_EQ(acc.version(), 1);

    const at::Tensor g = at::randn({2, 3});
    ASSERT_NO_THROW(y0.backward(g));
    const at::Tensor w1New = w1.detach();
    const at::Tensor w2New = w2.detach();
    // Weight gradient of the second layer: incoming grad × the activation saved at forward time.
    EXPECT_LT(maxAbsDiff(w2.grad(), at::mm(g.t(), hOld)), 1e-5);
    // Input gradient: computed through the saved weight tensors, which now hold the new values.
    EXPECT_LT(maxAbsDiff(x0.grad(), at::mm(at::mm(g, w2New), w1New)), 1e-5);
    // First layer's weight gradient: (g·W2_new)ᵀ·x0.
    EXPECT_LT(maxAbsDiff(w1.grad(), at::mm(at::mm(g, w2New).t(), x0.detach())), 1e-5);
}

// Why the library exists: the stock optimizer's in-place step breaks the pending backward.
TEST(LocalAccumulator, StockAdamWStepBreaksThePendingBackward)
{
    at::Tensor w = leaf(at::randn({3, 3}));
    torch::optim::AdamW stock({w}, torch::optim::AdamWOptions(0.1));
    at::Tensor x = leaf(at::randn({2, 3}));
    at::Tensor y = at::mm(x, w.t());
    w.mutable_grad() = at::ones_like(w);
    stock.step();
    EXPECT_THROW(y.sum().backward(), c10::Error);
}

// The a micro-batches' gradients enter the update as their mean (loss scaled by 1/a): the result
// equals torch::optim::AdamW stepped once on the mean gradient.
TEST(LocalAccumulator, AveragesTheGradientsOfTheWindow)
{
    at::manual_seed(3);
    const at::Tensor init = at::randn({4, 3});
    at::Tensor w = leaf(init.clone());
    LocalAccumulator acc({w}, options(4, 0.05));
    std::vector<at::Tensor> xs;
    at::Tensor meanGrad = at::zeros({4, 3});
    for (int i = 0; i < 4; ++i) {
        xs.push_back(at::randn({2, 3}));
        at::Tensor probe = leaf(init.clone());
        at::mm(xs.back(), probe.t()).pow(2).sum().backward();
        meanGrad += probe.grad() / 4.0;
    }
    for (const at::Tensor& x : xs) {
        (at::mm(x, w.t()).pow(2).sum() * acc.lossScale()).backward();
        acc.afterBackward();
    }
    ASSERT_EQ(acc.version(), 1);

    at::Tensor ref = leaf(init.clone());
    torch::optim::AdamW stock({ref}, torch::optim::AdamWOptions(0.05).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.1));
    ref.mutable_grad() = meanGrad;
    stock.step();
    EXPECT_LT(maxAbsDiff(w.detach(), ref.detach()), 1e-6);
}

// AdamW math, decay only on matrices, LR schedule: equal to torch::optim::AdamW with two param
// groups (decay / no decay) whose lr is set from the same schedule before every step.
TEST(LocalAccumulator, AdamWMatchesTorchOptimAdamW)
{
    at::manual_seed(4);
    const at::Tensor initW = at::randn({6, 5});
    const at::Tensor initB = at::randn({6});
    at::Tensor w = leaf(initW.clone());
    at::Tensor b = leaf(initB.clone());
    at::Tensor rw = leaf(initW.clone());
    at::Tensor rb = leaf(initB.clone());

    AccumulatorOptions o = options(1);
    o.lr = bs::paci::LrSchedule{3e-2, 2, 6, 0.1};
    LocalAccumulator acc({w, b}, o);
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(std::vector<at::Tensor>{rw},
        std::make_unique<torch::optim::AdamWOptions>(
            torch::optim::AdamWOptions(0.0).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.1)));
    groups.emplace_back(std::vector<at::Tensor>{rb},
        std::make_unique<torch::optim::AdamWOptions>(
            torch::optim::AdamWOptions(0.0).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.0)));
    torch::optim::AdamW stock(std::move(groups));

    for (int step = 0; step < 8; ++step) {
        const at::Tensor gw = at::randn({6, 5});
        const at::Tensor gb = at::randn({6});
        w.mutable_grad() = gw.clone();
        b.mutable_grad() = gb.clone();
        rw.mutable_grad() = gw.clone();
        rb.mutable_grad() = gb.clone();
        for (auto& group : stock.param_groups()) {
            static_cast<torch::optim::AdamWOptions&>(group.options()).lr(o.lr.lrAt(step));
        }
        acc.step();
        stock.step();
        EXPECT_LT(maxAbsDiff(w.detach(), rw.detach()), 1e-6) << "step " << step;
        EXPECT_LT(maxAbsDiff(b.detach(), rb.detach()), 1e-6) << "step " << step;
    }
    EXPECT_EQ(acc.optimizerStateBytes(), 2 * acc.parameterBytes());
}

TEST(LocalAccumulator, TagsLagAndSampledDrift)
{
    at::manual_seed(5);
    at::Tensor w = leaf(at::randn({4, 4}));
    AccumulatorOptions o = options(2, 0.1);
    o.driftSampleEvery = 2; // snapshots for the 1st and 3rd tagged micro-batches
    LocalAccumulator acc({w}, o);

    const bs::paci::ForwardTag t0 = acc.tagForward(0);
    const bs::paci::ForwardTag t1 = acc.tagForward(1);
    const bs::paci::ForwardTag t2 = acc.tagForward(2);
    ASSERT_TRUE(t0.snapshot);
    EXPECT_FALSE(t1.snapshot);
    ASSERT_TRUE(t2.snapshot);
    const at::Tensor theta0 = w.detach().clone();

    w.sum().backward();
    acc.afterBackward();
    w.sum().backward();
    ASSERT_TRUE(acc.afterBackward());

    const bs::paci::BackwardObservation o0 = acc.observeBackward(t0);
    EXPECT_EQ(o0.lag, 1);
    ASSERT_TRUE(o0.drift.has_value());
    const double expected = (w.detach() - theta0).norm().item<double>() / theta0.norm().item<double>();
    EXPECT_NEAR(*o0.drift, expected, 1e-6);
    EXPECT_GT(*o0.drift, 0.0);
    EXPECT_FALSE(acc.observeBackward(t1).drift.has_value());

    const bs::paci::ForwardTag t3 = acc.tagForward(3);
    EXPECT_EQ(acc.observeBackward(t3).lag, 0);
    const auto& stats = acc.stats();
    EXPECT_EQ(stats.maxLag, 1);
    ASSERT_EQ(stats.lagHistogram.size(), 2u);
    EXPECT_EQ(stats.lagHistogram[0], 1);
    EXPECT_EQ(stats.lagHistogram[1], 2);
    EXPECT_EQ(stats.driftSamples, 1);
}

TEST(LocalAccumulator, RejectsAnEmptyWindow)
{
    EXPECT_THROW(LocalAccumulator({}, options(0)), std::invalid_argument);
}

} // namespace
