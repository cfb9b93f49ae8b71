#pragma once
// StageTransport over PyTorch c10d: TCPStore rendezvous at MASTER_ADDR:MASTER_PORT (rank 0 hosts
// the store), ProcessGroupGloo for barriers and, by default, the point-to-point tensors
// (tag = handOffTag()). With `nccl` (CUDA ranks, a LibTorch with c10d's ProcessGroupNCCL) the
// tensors go over NCCL instead, from and to this rank's GPU: two NCCL groups, one for activations
// (rank s -> s+1 only) and one for gradients (s+1 -> s only), so each NCCL communicator carries
// one direction of one neighbour pair and a send queued behind another can never wait on a
// receive queued behind it (the deadlock of mixing both directions on one stream). NCCL ignores
// tags and delivers in issue order: sends and receives must come in ascending micro-batch order
// per direction, which every catalogue schedule's static per-stage order has (checked: an out-of-
// order call is an error, never a silent swap). With NCCL the hand-offs stay on the GPU: sends take
// the stage's tensor (HandOffForm::Tensor), receives land in a fresh GPU buffer the stage keeps, and
// the host never waits for a receive (the stage's stream does). Torch-free header (pimpl); the one torch TU of
// runtime/train/dist is gloo_transport.cpp.
//
// Failures: every blocking call is bounded by `timeout`. When a call fails, the rank first looks
// for a failure report in the store (a rank that fails writes "rank K: message" under the key
// "failure" before it exits), so ranks far from the dead one still name it; without one it names
// the peer it was talking to.

#include "runtime/train/dist/dist_env.h"
#include "runtime/train/exec/stage_transport.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace bs::runtime {

struct GlooOptions
{
    std::chrono::milliseconds timeout{std::chrono::seconds(60)}; ///< each send/recv, barrier, store fetch
    /// Joining: ranks of one job may start seconds apart (process start-up, loading LibTorch).
    /// `train --timeout` sets both (the rendezvous used to wait max(timeout, 120 s)).
    std::chrono::milliseconds rendezvousTimeout{std::chrono::seconds(60)};
    /// runIdentity() of this rank (dist_env.h): exchanged before the process group is built, so
    /// ranks started with other settings or another WORLD_SIZE fail at once naming the rank and
    /// the first field that differs (rank 0 compares every rank's with its own, the others rank
    /// 0's with theirs). Empty: not checked.
    std::string identity;
    bool nccl = false; ///< tensors over NCCL (needs cudaDevice >= 0 and a LibTorch with ProcessGroupNCCL)
    int cudaDevice = -1; ///< this rank's GPU (cuda:LOCAL_RANK)
};

/// True when this LibTorch has c10d's ProcessGroupNCCL (a CUDA build with USE_C10D_NCCL).
bool ncclTransportBuilt();

class GlooTransport final : public StageTransport
{
public:
    /// Rendezvous: blocks until all WORLD_SIZE ranks joined (or the timeout). Unavailable on failure.
    static Result<std::shared_ptr<GlooTransport>> connect(const DistEnv& env, const GlooOptions& options = {});
    ~GlooTransport() override;

    int rank() const override;
    int worldSize() const override;
    Status send(HandOffKind kind, int toStage, std::int64_t microbatch, HandOff value) override;
    Result<HandOff> recv(
        HandOffKind kind, int fromStage, std::int64_t microbatch, const std::vector<std::int64_t>& shape) override;
    Status flush() override;
    /// NCCL: Tensor (the stage's GPU tensors are sent and received as they are); Gloo: HostValues.
    HandOffForm handOffForm() const override;

    /// All ranks wait for each other (Gloo barrier).
    Status barrier();
    /// Key/value through the rendezvous store (results gathering). fetch waits up to the timeout.
    Status publish(const std::string& key, const std::string& value);
    Result<std::string> fetch(const std::string& key);
    /// Records the run's failure unless one is already recorded: "rank K: message" for this rank's
    /// own error, or `message` alone when a failed exchange of this rank named a peer (the message
    /// then starts with "rank P failed or is unreachable", its context names this rank), so every rank that
    /// reads the report names the rank that died first. Never throws.
    void reportFailure(const std::string& message) noexcept;
    /// The recorded failure, if any (and the store is reachable).
    std::optional<std::string> failureReport() noexcept;
    /// Lets go of this rank's hold on a file rendezvous' directory now, as the transport's end
    /// would (the last rank out removes it): for the failure path, which keeps the transport
    /// alive and exits. Never throws.
    void leaveRendezvous() noexcept;

private:
    struct Impl;
    explicit GlooTransport(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace bs::runtime
