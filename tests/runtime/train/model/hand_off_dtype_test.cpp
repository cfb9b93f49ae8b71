// The dtype of the tensors handed between stages (reads HandOff's torch side, so the target links
// LibTorch itself: a test TU that sees torch only through bs_model would compile against whatever
// torch headers the system has).
#include "runtime/train/model/hand_off_tensor_p.h"
#include "runtime/train/model/pipeline_model.h"

#include <gtest/gtest.h>

#include "test_tokens.h"

namespace bs::runtime {
namespace {

template<typename T>
void expectOk(const Result<T>& r)
{
    ASSERT_TRUE(r.has_value()) << r.error().describe();
}

// Under bf16 autocast the tensors that cross stages stay fp32: a block returns x + f(x) with x
// the fp32 residual stream (the embedding's output) and f's bf16 output, which promotes to fp32
// (gpt_modules.cpp), and a gradient has its input's dtype. So the NCCL transport's fp32 send and
// receive buffers (gloo_transport.cpp) are the tensors' own dtype: no conversion, no bf16 tensor
// sent at twice its size. Should a stage ever hand over bf16, this fails and the transport must
// learn the dtype.
TEST(HandOff, Bf16StagesHandOverFp32Tensors)
{
    ModelOptions o = test::tinyModelOptions(2, 1, WeightPolicy::Flush);
    o.bf16 = true;
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    expectOk(model);
    expectOk(model->forward(0, 0));
    std::optional<HandOff> activation = model->takeHandOff(HandOffKind::Activation, 1, 0, HandOffForm::Tensor);
    ASSERT_TRUE(activation && activation->tensor);
    EXPECT_EQ(activation->tensor->tensor.scalar_type(), at::kFloat);
    model->putHandOff(HandOffKind::Activation, 1, 0, *activation); // as a transport would deliver it
    expectOk(model->forward(1, 0));
    expectOk(model->backward(1, 0));
    std::optional<HandOff> gradient = model->takeHandOff(HandOffKind::Gradient, 0, 0, HandOffForm::Tensor);
    ASSERT_TRUE(gradient && gradient->tensor);
    EXPECT_EQ(gradient->tensor->tensor.scalar_type(), at::kFloat);
}

} // namespace
} // namespace bs::runtime
