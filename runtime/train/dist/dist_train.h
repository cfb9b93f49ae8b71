#pragma once
// One rank of a multi-process training run (`bubblescope-cli train --distributed`): checks the
// torchrun environment against the config (before any work), joins the c10d rendezvous, trains
// its own stage through RunSession with a GlooTransport (tensors over Gloo, or NCCL between CUDA
// ranks: --backend; each CUDA rank trains on cuda:LOCAL_RANK), then gathers every rank's trace and
// summary through the rendezvous store. Torch-free header.
//
// Clocks: after the rendezvous every rank enters a Gloo barrier and takes its clock zero the
// moment the barrier returns; every event is stamped in ns since that zero, so rank traces share
// one timeline without exchanging clock readings. The residual offset is the spread of the barrier
// release across ranks (a network one-way latency: tens of µs on localhost); rank 0 records the
// spread it sees in the merged trace's attributes ("clock_skew_bound_us": half the round trip of a
// store exchange measured right after the barrier).
//
// Run directory (outDir): rank K writes outDir/rank<K>/ (config.toml, metrics.jsonl, its own
// trace.json and summary.json); rank 0 writes outDir/trace.json (all ranks merged, one lane per
// stage), outDir/summary.json (the merged summary) and outDir/config.toml.

#include "runtime/plan/config/run_config.h"
#include "runtime/train/dist/dist_env.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <optional>

namespace bs::runtime {

struct DistRunOptions
{
    std::optional<std::filesystem::path> outDir;
    bool overwrite = false;
    /// Bound on every wait for another rank (rendezvous, each receive, gathering): a rank that
    /// died or hangs makes the others fail within about this long.
    std::chrono::milliseconds timeout{std::chrono::seconds(60)};
    /// Tensor backend: "nccl", "gloo" or "" = the device's default (distBackend()).
    std::string backend;
};

/// Runs this rank. Returns the merged summary (the `train --json` schema) on rank 0, this rank's
/// own summary elsewhere. Errors: InvalidArgument for a bad environment (before any work),
/// Unavailable when a peer failed (the message names the rank), the run's own error otherwise;
/// a failing rank records its error in the store first so the others can name it. After a
/// failure the c10d group is deliberately left alive (its destructor may wait on a dead peer):
/// the caller should end the process (std::_Exit) once it has reported the error.
Result<nlohmann::json> trainDistributed(const RunConfig& config, const DistEnv& env, const DistRunOptions& options);

} // namespace bs::runtime
