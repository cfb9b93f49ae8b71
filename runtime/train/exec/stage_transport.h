#pragma once
// How a multi-process run moves tensors between neighbour stages: one process (rank) per stage,
// point-to-point. Torch-free interface; GlooTransport (gloo_transport.h) implements it over PyTorch
// c10d. RunSession drives it from the rank's own static program (SessionOptions::transport).

#include "base/result.h"
#include "runtime/train/model/pipeline_model.h"

#include <cstdint>
#include <vector>

namespace bs::runtime {

class StageTransport
{
public:
    virtual ~StageTransport() = default;
    /// This process's rank = the stage it runs; ranks = stages.
    virtual int rank() const = 0;
    virtual int worldSize() const = 0;
    /// Starts sending `value` (activation of micro-batch `microbatch` to toStage = rank + 1, or its
    /// gradient to rank − 1); returns without waiting for the peer. Errors name the peer rank.
    virtual Status send(HandOffKind kind, int toStage, std::int64_t microbatch, HandOff value) = 0;
    /// Blocks until the tensor of that micro-batch from `fromStage` arrives (its shape is known in
    /// advance), the peer fails, or the transport's timeout passes: the error names the rank.
    virtual Result<HandOff> recv(
        HandOffKind kind, int fromStage, std::int64_t microbatch, const std::vector<std::int64_t>& shape) = 0;
    /// Waits until every send has completed.
    virtual Status flush() = 0;
    /// What send() wants from the stage (PipelineModel::takeHandOff): host values (Gloo), or the
    /// tensor itself where it lives (a transport that moves device memory: NCCL), and what
    /// recv() returns in turn.
    virtual HandOffForm handOffForm() const { return HandOffForm::HostValues; }
};

/// The message tag of a hand-off: micro-batch and direction (activation 0, gradient 1).
inline std::uint32_t handOffTag(HandOffKind kind, std::int64_t microbatch)
{
    return static_cast<std::uint32_t>(microbatch * 2 + (kind == HandOffKind::Gradient ? 1 : 0));
}

} // namespace bs::runtime
