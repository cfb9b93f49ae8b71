#pragma once
// The torch side of HandOff::tensor (hand_off.h): for the torch TUs that make or read one
// (pipeline_model_steps.cpp, runtime/train/dist's NCCL transport). Includes torch.

#include "runtime/train/model/hand_off.h"

#include <ATen/core/Tensor.h>

namespace bs::runtime {

struct HandOffTensor
{
    at::Tensor tensor;
};

inline HandOff handOffOf(at::Tensor t)
{
    HandOff h;
    h.shape = t.sizes().vec();
    h.tensor = std::make_shared<const HandOffTensor>(HandOffTensor{std::move(t)});
    return h;
}

} // namespace bs::runtime
