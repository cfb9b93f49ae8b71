// The gradient noise scale a pipeline measures (noise_probe_p.h) against the direct estimate from
// per-example gradients of the same model: tr(Σ) = mean over examples of |g_i − ḡ|², |G|² = |ḡ|²
// (the population of N examples the micro-batches are drawn from, with replacement). The learning
// rate is 0, so every gradient is of the same weights and the two must agree but for sampling.
#include "runtime/train/model/pipeline_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "test_tokens.h"

namespace bs::runtime {
namespace {

constexpr int kStages = 2;
constexpr int kExamples = 48;

ModelOptions options(int microBatchSize, int window, WeightPolicy weights)
{
    ModelOptions o = test::tinyModelOptions(kStages, window, weights);
    o.microBatchSize = microBatchSize;
    o.optimizer.lr = 0.0; // weights never move: every gradient is of the same weights
    o.optimizer.weightDecay = 0.0;
    return o;
}

/// Example i of the population (one sequence).
Result<TokenBatch> example(std::int64_t i)
{
    return test::patternTokens(test::tinyTestShape(), 1)(i % kExamples);
}

/// Micro-batch mb: `b` examples drawn with replacement (a pure function of mb).
TokenFn drawn(int b)
{
    return [b](std::int64_t mb) -> Result<TokenBatch> {
        std::mt19937_64 rng(1234U + static_cast<std::uint64_t>(mb));
        std::uniform_int_distribution<int> pick(0, kExamples - 1);
        TokenBatch out;
        out.batch = b;
        out.seq = test::tinyTestShape().seqLen;
        for (int r = 0; r < b; ++r) {
            Result<TokenBatch> e = example(pick(rng));
            out.inputs.insert(out.inputs.end(), e->inputs.begin(), e->inputs.end());
            out.targets.insert(out.targets.end(), e->targets.begin(), e->targets.end());
        }
        return out;
    };
}

struct Direct
{
    double gradSq = 0.0;
    double trace = 0.0;
};

/// Per stage, from each example's own gradient.
std::vector<Direct> perExample()
{
    auto model = PipelineModel::create(options(1, 1, WeightPolicy::Flush), example);
    EXPECT_TRUE(model.has_value());
    std::vector<std::vector<std::vector<double>>> grads(kStages); // [stage][example] -> gradient
    for (int i = 0; i < kExamples; ++i) {
        for (int s = 0; s < kStages; ++s) {
            EXPECT_TRUE(model->forward(s, i).has_value());
        }
        for (int s = kStages - 1; s >= 0; --s) {
            EXPECT_TRUE(model->backward(s, i).has_value());
        }
        for (int s = 0; s < kStages; ++s) {
            grads[static_cast<std::size_t>(s)].push_back(model->gradients(s));
            EXPECT_TRUE(model->update(s, 1).has_value()); // lr 0: zeroes the gradients only
        }
    }
    std::vector<Direct> out(kStages);
    for (std::size_t s = 0; s < grads.size(); ++s) {
        const std::size_t n = grads[s][0].size();
        std::vector<double> mean(n, 0.0);
        for (const auto& g : grads[s]) {
            for (std::size_t k = 0; k < n; ++k) {
                mean[k] += g[k] / kExamples;
            }
        }
        for (std::size_t k = 0; k < n; ++k) {
            out[s].gradSq += mean[k] * mean[k];
        }
        for (const auto& g : grads[s]) {
            for (std::size_t k = 0; k < n; ++k) {
                out[s].trace += (g[k] - mean[k]) * (g[k] - mean[k]) / kExamples;
            }
        }
    }
    return out;
}

/// `updates` windows of `window` micro-batches of b examples through the pipeline (GPipe order).
std::vector<StageNoiseScale> measured(int b, int window, WeightPolicy weights, int updates)
{
    auto model = PipelineModel::create(options(b, window, weights), drawn(b));
    EXPECT_TRUE(model.has_value());
    std::int64_t mb = 0;
    for (int u = 0; u < updates; ++u) {
        for (int i = 0; i < window; ++i) {
            for (int s = 0; s < kStages; ++s) {
                EXPECT_TRUE(model->forward(s, mb + i).has_value());
            }
        }
        for (int i = 0; i < window; ++i) {
            for (int s = kStages - 1; s >= 0; --s) {
                EXPECT_TRUE(model->backward(s, mb + i).has_value());
            }
        }
        for (int s = 0; s < kStages; ++s) {
            EXPECT_TRUE(model->update(s, window).has_value());
        }
        mb += window;
    }
    std::vector<StageNoiseScale> out;
    for (int s = 0; s < kStages; ++s) {
        std::optional<StageNoiseScale> n = model->noiseScale(s);
        EXPECT_TRUE(n.has_value()) << "stage " << s;
        out.push_back(n.value_or(StageNoiseScale{}));
    }
    return out;
}

void expectWithin(double measured, double direct, double tolerance, const std::string& what)
{
    EXPECT_LT(std::abs(measured - direct), tolerance * std::abs(direct))
        << what << ": measured " << measured << ", per-example " << direct;
}

void expectAgrees(const std::vector<StageNoiseScale>& got, const std::vector<Direct>& direct, double b, double big)
{
    double gradSq = 0.0, trace = 0.0, directGradSq = 0.0, directTrace = 0.0;
    for (std::size_t s = 0; s < got.size(); ++s) {
        EXPECT_EQ(got[s].bSmall, b);
        EXPECT_EQ(got[s].bBig, big);
        gradSq += got[s].gradSqNorm;
        trace += got[s].traceSigma;
        directGradSq += direct[s].gradSq;
        directTrace += direct[s].trace;
        expectWithin(got[s].traceSigma, direct[s].trace, 0.2, "stage " + std::to_string(s) + " tr(Σ)");
    }
    expectWithin(trace, directTrace, 0.2, "tr(Σ)");
    expectWithin(gradSq, directGradSq, 0.2, "|G|²");
    expectWithin(simpleNoiseScale(trace, gradSq), directTrace / directGradSq, 0.2, "B_simple");
}

TEST(NoiseScaleRun, PaciWindowsAgreeWithPerExampleGradients)
{
    const std::vector<Direct> direct = perExample();
    ASSERT_GT(direct[0].gradSq, 0.0);
    const std::vector<StageNoiseScale> got = measured(4, 4, WeightPolicy::InPlace, 150);
    for (const StageNoiseScale& stage : got) {
        EXPECT_EQ(stage.updates, 150) << "stage " << stage.stage; // every window of four
    }
    expectAgrees(got, direct, 4.0, 16.0);
}

TEST(NoiseScaleRun, WindowsOfTwoMeasureEveryOtherWindow)
{
    // One small gradient per NoiseProbe::kBackwardsPerSmallGradient = 4 micro-batches: at a = 2
    // every other window (its extra read of the gradients cost 1.35-1.71 % of a step in every one).
    const std::vector<StageNoiseScale> got = measured(4, 2, WeightPolicy::InPlace, 240);
    double trace = 0.0, directTrace = 0.0;
    const std::vector<Direct> direct = perExample();
    for (std::size_t s = 0; s < got.size(); ++s) {
        EXPECT_EQ(got[s].updates, 120) << "stage " << s;
        EXPECT_EQ(got[s].bBig, 8.0);
        trace += got[s].traceSigma;
        directTrace += direct[s].trace;
    }
    // tr(Σ) agrees; |G|² from gradients of b and 2b is the noisiest estimate the probe makes
    // (here −31 %, B_simple +51 %), why goodputFromRuns() weighs runs' noise scales by precision.
    expectWithin(trace, directTrace, 0.2, "tr(Σ)");
}

TEST(NoiseScaleRun, FlushBatchesAgreeWithPerExampleGradients)
{
    expectAgrees(measured(2, 8, WeightPolicy::Flush, 150), perExample(), 2.0, 16.0);
}

TEST(NoiseScaleRun, PerMicroBatchUpdatesArePairedOncePer32Updates)
{
    // One pair in every NoiseProbe::kUpdatesPerPair = 32 updates is measured (its copy and add
    // cost 4.7 % of a CPU step when every pair was): 960 updates hold 30 pairs.
    const std::vector<StageNoiseScale> got = measured(4, 1, WeightPolicy::InPlace, 960);
    const std::vector<Direct> direct = perExample();
    double trace = 0.0, directTrace = 0.0;
    for (std::size_t s = 0; s < got.size(); ++s) {
        EXPECT_EQ(got[s].updates, 960 / 32) << "stage " << s;
        EXPECT_EQ(got[s].bSmall, 4.0);
        EXPECT_EQ(got[s].bBig, 8.0);
        trace += got[s].traceSigma;
        directTrace += direct[s].trace;
    }
    // tr(Σ) agrees; |G|² from gradients of b and 2b is as noisy as a = 2's (here +48 %).
    expectWithin(trace, directTrace, 0.2, "tr(Σ)");
}

} // namespace
} // namespace bs::runtime
