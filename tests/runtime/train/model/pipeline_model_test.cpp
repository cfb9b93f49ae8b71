// PipelineModel driven by hand-written legal action orders (the scheduler core's job in real
// runs), checked against the plain reference trainer and the weight-policy contracts.
#include "runtime/train/model/pipeline_model.h"

#include "runtime/train/model/reference_trainer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_tokens.h"

namespace bs::runtime {
namespace {

constexpr int kP = 4;
constexpr int kM = 4;

void expectOk(const Status& s)
{
    ASSERT_TRUE(s.has_value()) << s.error().describe();
}
template<typename T>
void expectOk(const Result<T>& r)
{
    ASSERT_TRUE(r.has_value()) << r.error().describe();
}

std::vector<double> referenceLosses(int batches)
{
    const ModelOptions o = test::tinyModelOptions(kP, kM, WeightPolicy::Flush);
    auto ref = ReferenceTrainer::create(o, test::patternTokens(o.shape, o.microBatchSize));
    EXPECT_TRUE(ref.has_value());
    std::vector<double> losses;
    for (int n = 0; n < batches; ++n) {
        auto l = ref->trainBatch(static_cast<std::int64_t>(n) * kM, kM);
        EXPECT_TRUE(l.has_value());
        losses.push_back(*l);
    }
    return losses;
}

double batchLoss(const PipelineModel& model, int n)
{
    double sum = 0.0;
    for (int i = 0; i < kM; ++i) {
        sum += model.loss(static_cast<std::int64_t>(n) * kM + i).value_or(NAN);
    }
    return sum / kM;
}

TEST(PipelineModel, GpipeOrderMatchesReferenceStepByStep)
{
    const ModelOptions o = test::tinyModelOptions(kP, kM, WeightPolicy::Flush);
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    expectOk(model);
    const std::vector<double> ref = referenceLosses(3);
    for (int n = 0; n < 3; ++n) {
        for (int i = 0; i < kM; ++i) {
            for (int s = 0; s < kP; ++s) {
                expectOk(model->forward(s, n * kM + i));
            }
        }
        for (int i = 0; i < kM; ++i) {
            for (int s = kP - 1; s >= 0; --s) {
                expectOk(model->backward(s, n * kM + i));
            }
        }
        for (int s = 0; s < kP; ++s) {
            expectOk(model->update(s, kM));
        }
        EXPECT_NEAR(batchLoss(*model, n), ref[static_cast<std::size_t>(n)], 1e-5 * ref[static_cast<std::size_t>(n)])
            << "batch " << n;
    }
    EXPECT_LT(ref[2], ref[0]);
    EXPECT_EQ(model->pendingCount(), 0u);
}

TEST(PipelineModel, SplitBackwardMatchesReference)
{
    const ModelOptions o = test::tinyModelOptions(kP, kM, WeightPolicy::Flush);
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    expectOk(model);
    const std::vector<double> ref = referenceLosses(2);
    for (int n = 0; n < 2; ++n) {
        for (int i = 0; i < kM; ++i) {
            const int mb = n * kM + i;
            for (int s = 0; s < kP; ++s) {
                expectOk(model->forward(s, mb));
            }
            for (int s = kP - 1; s >= 0; --s) {
                expectOk(model->backwardInput(s, mb));
            }
        }
        for (int i = kM - 1; i >= 0; --i) { // W passes deferred and reordered, as ZB does
            for (int s = 0; s < kP; ++s) {
                expectOk(model->backwardWeight(s, n * kM + i));
            }
        }
        for (int s = 0; s < kP; ++s) {
            expectOk(model->update(s, kM));
        }
        EXPECT_NEAR(batchLoss(*model, n), ref[static_cast<std::size_t>(n)], 1e-5 * ref[static_cast<std::size_t>(n)]);
    }
}

TEST(PipelineModel, UpdateRejectsAWindowThatDoesNotMatchTheBackwardCount)
{
    const ModelOptions o = test::tinyModelOptions(2, 2, WeightPolicy::Flush);
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    expectOk(model);
    expectOk(model->forward(0, 0));
    expectOk(model->forward(1, 0));
    expectOk(model->backward(1, 0));
    const Status s = model->update(1, 2);
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.error().code, ErrorCode::Internal);
    EXPECT_FALSE(model->backward(1, 5).has_value()) << "backward without forward is an error, not a crash";
}

// F(0), F(1) on every stage; B(0) and an update; then B(1), whose forward saw the old version.
struct LateBackward
{
    StageMetrics stage0;
    int maxStashedVersions = 0;
};

LateBackward runLateBackward(WeightPolicy policy)
{
    ModelOptions o = test::tinyModelOptions(2, 1, policy);
    o.driftSampleEvery = 1;
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    EXPECT_TRUE(model.has_value());
    for (int mb = 0; mb < 2; ++mb) {
        for (int s = 0; s < 2; ++s) {
            EXPECT_TRUE(model->forward(s, mb).has_value());
        }
    }
    for (int mb = 0; mb < 2; ++mb) {
        for (int s = 1; s >= 0; --s) {
            auto r = model->backward(s, mb);
            EXPECT_TRUE(r.has_value()) << r.error().describe();
            EXPECT_TRUE(model->update(s, 1).has_value());
        }
    }
    return {model->stageMetrics(0), model->maxStashedVersions(0)};
}

TEST(PipelineModel, InPlaceBackwardSeesUpdatedWeights)
{
    const LateBackward r = runLateBackward(WeightPolicy::InPlace);
    EXPECT_EQ(r.stage0.maxLag, 1);
    ASSERT_EQ(r.stage0.driftSamples, 2);
    EXPECT_GT(r.stage0.maxDrift, 0.0) << "micro-batch 1's backward ran on weights updated after its forward";
    EXPECT_EQ(r.maxStashedVersions, 0);
    EXPECT_EQ(r.stage0.stashBytes, 0);
}

TEST(PipelineModel, StashedBackwardUsesTheForwardWeights)
{
    const LateBackward r = runLateBackward(WeightPolicy::Stash);
    EXPECT_EQ(r.stage0.maxLag, 1);
    ASSERT_EQ(r.stage0.driftSamples, 2);
    EXPECT_EQ(r.stage0.maxDrift, 0.0) << "the backward ran on the stashed version its forward used";
    EXPECT_EQ(r.maxStashedVersions, 1);
    EXPECT_GT(r.stage0.peakStashBytes, 0) << "the stash is charged to the stage";
    EXPECT_EQ(r.stage0.stashBytes, 0) << "and freed when no backward needs it";
}

TEST(PipelineModel, MeasuresParameterGradientAndOptimizerBytes)
{
    const ModelOptions o = test::tinyModelOptions(kP, kM, WeightPolicy::Flush);
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    expectOk(model);
    std::int64_t total = 0;
    for (int s = 0; s < kP; ++s) {
        const StageMetrics st = model->stageMetrics(s);
        EXPECT_EQ(st.stage, s);
        const std::int64_t bytes = model->parameterCount(s) * 4;
        EXPECT_GE(st.paramBytes, bytes) << "stage " << s;
        EXPECT_LE(st.paramBytes, bytes + 4096) << "stage " << s;
        EXPECT_EQ(st.gradBytes, bytes) << "stage " << s;
        EXPECT_EQ(st.optimizerBytes, 2 * bytes) << "stage " << s;
        total += model->parameterCount(s);
    }
    EXPECT_EQ(total, o.shape.totalParams());
    expectOk(model->forward(0, 0));
    EXPECT_GT(model->stageMetrics(0).activationBytes, 0);
}

} // namespace
} // namespace bs::runtime

namespace bs::runtime {
namespace {

TEST(PipelineModel, DivergenceIsACleanError)
{
    ModelOptions o = test::tinyModelOptions(2, 1, WeightPolicy::InPlace);
    o.optimizer.lr = 1e30; // one AdamW step moves every weight by ~1e30: the next forward overflows
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    ASSERT_TRUE(model.has_value());
    Status failure = ok();
    for (int mb = 0; mb < 4 && failure.has_value(); ++mb) {
        for (int s = 0; s < 2 && failure.has_value(); ++s) {
            auto r = model->forward(s, mb);
            if (!r) {
                failure = r.error();
            }
        }
        for (int s = 1; s >= 0 && failure.has_value(); --s) {
            auto r = model->backward(s, mb);
            failure = r ? model->update(s, 1) : Status(r.error());
        }
    }
    ASSERT_FALSE(failure.has_value()) << "a 1e30 learning rate must diverge";
    EXPECT_EQ(failure.error().code, ErrorCode::Diverged);
    EXPECT_NE(failure.error().message.find("diverged"), std::string::npos);
    EXPECT_NE(failure.error().context.find("stage"), std::string::npos);
}

} // namespace
} // namespace bs::runtime

namespace bs::runtime {
namespace {

// A rank of a multi-process run builds its own stage only, with the same weights the whole model
// has there: its forward of a handed-in activation equals the whole model's, bit for bit.
TEST(PipelineModel, OneStageModelHoldsOnlyItsStageWithTheSameWeights)
{
    const ModelOptions whole = test::tinyModelOptions(kP, kM, WeightPolicy::Flush);
    ModelOptions one = whole;
    one.onlyStage = 1;
    const TokenFn tokens = test::patternTokens(whole.shape, whole.microBatchSize);
    std::int64_t stage1Params = 0;
    std::optional<HandOff> activation, expected;
    { // the whole model is gone before the rank's memory is measured
        auto full = PipelineModel::create(whole, tokens);
        expectOk(full);
        stage1Params = full->parameterCount(1);
        expectOk(full->forward(0, 0));
        activation = full->takeHandOff(HandOffKind::Activation, 1, 0);
        ASSERT_TRUE(activation.has_value());
        full->putHandOff(HandOffKind::Activation, 1, 0, *activation);
        expectOk(full->forward(1, 0));
        expected = full->takeHandOff(HandOffKind::Activation, 2, 0);
        ASSERT_TRUE(expected.has_value());
    }

    auto rank = PipelineModel::create(one, tokens);
    expectOk(rank);
    EXPECT_EQ(rank->parameterCount(1), stage1Params);
    for (int s : {0, 2, 3}) {
        EXPECT_EQ(rank->parameterCount(s), 0) << "stage " << s;
        EXPECT_EQ(MemoryTracker::stage(s).liveOf(MemoryCategory::Parameters), 0) << "stage " << s;
    }
    rank->putHandOff(HandOffKind::Activation, 1, 0, *activation);
    expectOk(rank->forward(1, 0));
    const std::optional<HandOff> got = rank->takeHandOff(HandOffKind::Activation, 2, 0);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->shape, expected->shape);
    EXPECT_EQ(got->values, expected->values);
    // Validation needs every stage.
    const auto eval = rank->evaluate({TokenBatch{}});
    ASSERT_FALSE(eval.has_value());
    EXPECT_EQ(eval.error().code, ErrorCode::InvalidArgument);

    ModelOptions bad = whole;
    bad.onlyStage = kP;
    const auto rejected = PipelineModel::create(bad, tokens);
    ASSERT_FALSE(rejected.has_value());
    EXPECT_EQ(rejected.error().code, ErrorCode::InvalidArgument);
}

} // namespace
} // namespace bs::runtime
