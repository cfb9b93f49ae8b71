#pragma once
// What travels between two pipeline stages (an activation forward, a gradient backward) and the
// route it takes. Torch-free: PipelineModel (in one process) and StageTransport (between processes)
// speak it; the torch side of an opaque tensor is hand_off_tensor_p.h.

#include <cstdint>
#include <memory>
#include <vector>

namespace bs::runtime {

enum class HandOffKind
{
    Activation,
    Gradient
};

/// A tensor as the producing stage left it, where it lives (the CPU or a CUDA device). Opaque
/// here; defined in runtime/train/model/hand_off_tensor_p.h for the torch TUs that make and read it.
struct HandOffTensor;

/// A tensor handed between stages: either fp32 host values (row-major; `tensor` empty), or the
/// tensor itself (`tensor` set, `values` empty), so that a transport that moves device memory
/// (NCCL) sends it without a host copy. `shape` is set either way.
struct HandOff
{
    std::vector<std::int64_t> shape;
    std::vector<float> values;
    std::shared_ptr<const HandOffTensor> tensor;

    bool onHost() const { return !tensor; }
};

/// Which of the two a transport wants from PipelineModel::takeHandOff (StageTransport::handOffForm).
enum class HandOffForm
{
    HostValues,
    Tensor
};

/// How a hand-off inside one process reaches the receiving stage's device.
enum class HandOffRoute
{
    Clone, ///< CPU to CPU: a copy into the receiver's own buffer (what a recv does; the CPU
           ///< memory tracker then charges it to the receiver)
    SameDevice, ///< both stages on one GPU: the receiver uses the producer's tensor, zero copy
    PeerCopy, ///< GPU to another GPU: device to device on a copy stream of the receiver
    HostStaged, ///< CPU to GPU or back: through host memory
};

/// The route between a tensor on `fromDevice` and a stage on `toDevice` (−1 = the CPU, k = cuda:k).
constexpr HandOffRoute handOffRoute(int fromDevice, int toDevice)
{
    if (fromDevice < 0 && toDevice < 0) {
        return HandOffRoute::Clone;
    }
    if (fromDevice < 0 || toDevice < 0) {
        return HandOffRoute::HostStaged;
    }
    return fromDevice == toDevice ? HandOffRoute::SameDevice : HandOffRoute::PeerCopy;
}

/// Hand-offs a model performed, by how they travelled (PipelineModel::handOffCounts()). On a GPU
/// run `hostStaged` stays 0 unless a transport asked for host values (Gloo).
struct HandOffCounts
{
    std::int64_t cloned = 0; ///< HandOffRoute::Clone
    std::int64_t sameDevice = 0; ///< HandOffRoute::SameDevice
    std::int64_t peerCopies = 0; ///< HandOffRoute::PeerCopy
    /// Copies through host memory: HandOffRoute::HostStaged, plus every HandOff made of or read
    /// from host values for a transport (a device tensor copied to the host, or host values copied
    /// into a tensor).
    std::int64_t hostStaged = 0;
    std::int64_t tensorsPassed = 0; ///< HandOff tensors given to or taken from a transport as they are
};

} // namespace bs::runtime
