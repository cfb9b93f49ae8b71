// How tensors travel between stages (hand_off.h): the route per device pair, the copies a CPU
// run makes in one process (unchanged: a clone per hand-off), and the tensor form a device
// transport (NCCL) uses, which never stages through host values: two one-stage models (two
// "ranks") exchanging HandOff tensors give the whole model's numbers bit for bit.
#include "runtime/train/model/hand_off.h"

#include "runtime/train/model/pipeline_model.h"

#include <gtest/gtest.h>

#include "test_tokens.h"

namespace bs::runtime {
namespace {

static_assert(handOffRoute(-1, -1) == HandOffRoute::Clone);
static_assert(handOffRoute(0, 0) == HandOffRoute::SameDevice);
static_assert(handOffRoute(3, 3) == HandOffRoute::SameDevice);
static_assert(handOffRoute(0, 1) == HandOffRoute::PeerCopy);
static_assert(handOffRoute(-1, 0) == HandOffRoute::HostStaged);
static_assert(handOffRoute(2, -1) == HandOffRoute::HostStaged);

template<typename T>
void expectOk(const Result<T>& r)
{
    ASSERT_TRUE(r.has_value()) << r.error().describe();
}

TEST(HandOff, CpuStagesInOneProcessCloneEveryHandOffAndStageNothingThroughTheHost)
{
    constexpr int p = 4;
    const ModelOptions o = test::tinyModelOptions(p, 1, WeightPolicy::Flush);
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    expectOk(model);
    for (int s = 0; s < p; ++s) {
        expectOk(model->forward(s, 0));
    }
    for (int s = p - 1; s >= 0; --s) {
        expectOk(model->backward(s, 0));
    }
    const HandOffCounts c = model->handOffCounts();
    EXPECT_EQ(c.cloned, 2 * (p - 1)); // p − 1 activations forward, p − 1 gradients back
    EXPECT_EQ(c.sameDevice, 0);
    EXPECT_EQ(c.peerCopies, 0);
    EXPECT_EQ(c.hostStaged, 0);
    EXPECT_EQ(c.tensorsPassed, 0);
}

// One micro-batch through a 2-stage model, whole and as two ranks whose hand-offs go `form`.
struct TwoRanks
{
    double loss = 0;
    HandOff gradient; // stage 1's input gradient as stage 0 received it (host values)
    HandOffCounts rank0, rank1;
};

TwoRanks twoRanks(HandOffForm form)
{
    ModelOptions o = test::tinyModelOptions(2, 1, WeightPolicy::Flush);
    const TokenFn tokens = test::patternTokens(o.shape, o.microBatchSize);
    ModelOptions o0 = o, o1 = o;
    o0.onlyStage = 0;
    o1.onlyStage = 1;
    auto r0 = PipelineModel::create(o0, tokens);
    auto r1 = PipelineModel::create(o1, tokens);
    EXPECT_TRUE(r0 && r1);
    TwoRanks out;
    if (!r0 || !r1) {
        return out;
    }
    r0->setTargetsFromTokens(true);
    r1->setTargetsFromTokens(true);
    EXPECT_TRUE(r0->forward(0, 0));
    std::optional<HandOff> act = r0->takeHandOff(HandOffKind::Activation, 1, 0, form);
    EXPECT_TRUE(act.has_value());
    EXPECT_EQ(act->onHost(), form == HandOffForm::HostValues);
    r1->putHandOff(HandOffKind::Activation, 1, 0, *act);
    EXPECT_TRUE(r1->forward(1, 0));
    EXPECT_TRUE(r1->backward(1, 0));
    std::optional<HandOff> grad = r1->takeHandOff(HandOffKind::Gradient, 0, 0, form);
    EXPECT_TRUE(grad.has_value());
    r0->putHandOff(HandOffKind::Gradient, 0, 0, *grad);
    // Read what stage 0 holds back through the host form (counted on rank 0 after the snapshot).
    out.rank0 = r0->handOffCounts();
    out.rank1 = r1->handOffCounts();
    out.loss = r1->loss(0).value_or(-1.0);
    std::optional<HandOff> back = r0->takeHandOff(HandOffKind::Gradient, 0, 0, HandOffForm::HostValues);
    EXPECT_TRUE(back.has_value());
    out.gradient = back ? *back : HandOff{};
    return out;
}

TEST(HandOff, TensorFormCrossesRanksWithoutHostStagingAndGivesTheSameNumbers)
{
    const TwoRanks host = twoRanks(HandOffForm::HostValues);
    const TwoRanks tensor = twoRanks(HandOffForm::Tensor);
    // Gloo's form: each rank copies out (take) and in (put) through host values once per hand-off.
    EXPECT_EQ(host.rank0.hostStaged, 2);
    EXPECT_EQ(host.rank1.hostStaged, 2);
    // The device form: the tensors pass as they are, nothing staged.
    EXPECT_EQ(tensor.rank0.hostStaged, 0);
    EXPECT_EQ(tensor.rank1.hostStaged, 0);
    EXPECT_EQ(tensor.rank0.tensorsPassed, 2);
    EXPECT_EQ(tensor.rank1.tensorsPassed, 2);
    EXPECT_EQ(tensor.loss, host.loss);
    EXPECT_GT(host.loss, 0.0);
    EXPECT_EQ(tensor.gradient.shape, host.gradient.shape);
    EXPECT_EQ(tensor.gradient.values, host.gradient.values);
    EXPECT_FALSE(host.gradient.values.empty());
}

} // namespace
} // namespace bs::runtime

namespace bs::runtime {
namespace {

// The last stage keeps its losses on its device: nothing is read inside a forward, and a batch's
// losses come back in one transfer, equal to what each forward computed.
TEST(Losses, StayOnTheDeviceUntilTheBatchIsReadInOneTransfer)
{
    constexpr int p = 2;
    constexpr int m = 4;
    const ModelOptions o = test::tinyModelOptions(p, m, WeightPolicy::Flush);
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    expectOk(model);
    for (int mb = 0; mb < m; ++mb) {
        for (int s = 0; s < p; ++s) {
            expectOk(model->forward(s, mb));
        }
    }
    EXPECT_EQ(model->lossReads(), 0) << "no forward reads its loss to the host";
    const std::vector<std::optional<double>> batch = model->readLosses(0, m);
    EXPECT_EQ(model->lossReads(), 1);
    ASSERT_EQ(batch.size(), static_cast<std::size_t>(m));
    for (int mb = 0; mb < m; ++mb) {
        ASSERT_TRUE(batch[mb].has_value());
        EXPECT_GT(*batch[mb], 0.0);
        EXPECT_EQ(model->loss(mb), batch[mb]); // read already: no second transfer
    }
    EXPECT_EQ(model->lossReads(), 1);
    EXPECT_FALSE(model->loss(m).has_value()); // no forward of micro-batch m ran
    EXPECT_EQ(model->lossReads(), 1);
}

} // namespace
} // namespace bs::runtime
