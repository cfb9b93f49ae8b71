#pragma once
// The torchrun environment of one rank: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT.
// Torch-free.

#include "base/result.h"
#include "runtime/plan/config/run_config.h"

#include <functional>
#include <optional>
#include <string>

namespace bs::runtime {

struct DistEnv
{
    int rank = 0;
    int worldSize = 1;
    int localRank = 0;
    std::string masterAddr;
    int masterPort = 0;
};

/// Reads the five variables through `getenv` (default: the process environment). Errors
/// (InvalidArgument, naming the variable): missing, not an integer, rank outside [0, WORLD_SIZE),
/// port outside [1, 65535].
Result<DistEnv> readDistEnv(const std::function<const char*(const char*)>& getenv = {});

/// One rank per stage: InvalidArgument unless WORLD_SIZE == pipeline.stages; checked before any work.
Status checkDistEnv(const DistEnv& env, const RunConfig& config);

/// The tensor backend of a multi-process run: `requested` "nccl" or "gloo", or "" = the device's
/// default (nccl on CUDA, gloo on the CPU). InvalidArgument (context "--backend") for another name
/// or nccl on the CPU.
Result<std::string> distBackend(const std::string& requested, const RunConfig& config);

/// What every rank of one run must agree on, one `section.key = value` line each: WORLD_SIZE, the
/// tensor backend and every config field (toToml without comments) but device.name, which differs
/// per rank on CUDA (rankDevice). Ranks exchange it at the rendezvous (gloo_transport.h).
std::string runIdentity(const DistEnv& env, const RunConfig& config, const std::string& backend);

/// The first line where two identities differ, as "pipeline.microbatches = 2 here, 4 on rank 0"
/// (`other` names the other rank), or nullopt when they are equal.
std::optional<std::string> identityDifference(
    const std::string& mine, const std::string& theirs, const std::string& other);

/// Where this rank's Gloo transport listens and is reached by its peers: its own interface or
/// address, not MASTER_ADDR (every rank used to bind the master's address, which only works when
/// all ranks run on the master's machine).
struct GlooEndpoint
{
    enum class Kind
    {
        Interface,
        Hostname,
        ThisHost
    };
    Kind kind = Kind::ThisHost;
    std::string value; ///< the interface (Interface) or the name/address (Hostname)
};

/// GLOO_SOCKET_IFNAME (PyTorch's variable; the first of a comma-separated list) names an
/// interface; else BUBBLESCOPE_GLOO_HOSTNAME a name or address of this rank; else a loopback
/// MASTER_ADDR means one machine, so 127.0.0.1 (nothing reachable from outside); else this
/// machine's hostname (ThisHost: Gloo resolves it, falling back to loopback).
GlooEndpoint glooEndpoint(const DistEnv& env, const std::function<const char*(const char*)>& getenv = {});

/// The device of this rank: on CUDA one GPU per rank, cuda:LOCAL_RANK (torchrun's convention);
/// "cpu" stays "cpu".
std::string rankDevice(const DistEnv& env, const RunConfig& config);

} // namespace bs::runtime
