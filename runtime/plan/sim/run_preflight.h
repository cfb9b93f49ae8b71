#pragma once
// Pre-flight of a whole run (issue 14), for every way a run starts: `train` (CPU or CUDA),
// each rank of `train --distributed` / `launch`, and the GUI's Train. Before anything is
// allocated, the simulator's per-stage memory estimate (preflight.h) is compared with the memory
// where the stages will live: host RAM on the CPU, each GPU's memory capacity (runtime/plan/gpu's
// probe) on CUDA. Torch-free; the capacities are arguments, so the CUDA branches are tested
// without a GPU.
//
// Which stages share which memory:
//   cpu                all stages (one process), or every rank on this host (distributed: RAM)
//   cuda:N             all stages on GPU N
//   cuda               stages in contiguous blocks over the GPUs: ceil(p / GPUs) on each, against
//                      the smallest GPU (conservative)
//   cuda, distributed  one stage per rank on cuda:LOCAL_RANK

#include "base/result.h"
#include "runtime/plan/config/run_config.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace bs::runtime {

struct MemoryCapacity
{
    std::int64_t hostBytes = 0; ///< available RAM; 0 = unknown (no check)
    std::vector<std::int64_t> gpuBytes; ///< per visible CUDA device index: its memory capacity
};

/// This machine's: availableHostMemoryBytes() and each GPU's total memory (none without a driver).
MemoryCapacity probeMemoryCapacity();

/// Who is starting: a whole run in this process, or one rank of a distributed run.
struct PreflightScope
{
    bool reference = false; ///< the plain reference trainer: not checked (no pipeline to simulate)
    bool distributed = false;
    int localRank = 0; ///< distributed: this rank's GPU (cuda:LOCAL_RANK)
    int ranksOnThisHost = 0; ///< distributed CPU ranks sharing this host's RAM (0 = all stages)
};

/// ok, or InvalidArgument with the estimate, the memory and where it is ("cuda:1 memory", "host
/// RAM") and the nearest micro-batch size that fits. A config the simulator cannot model, or a
/// capacity that is unknown, is not refused here (the run itself tells).
Status preflightRun(const RunConfig& config, const MemoryCapacity& capacity, const PreflightScope& scope = {});

/// The one pre-flight of everything a run's start refuses before it trains (issue 30): the
/// runtime's config validator (RunSession::create: "16 model chunks for dualpipev exceed
/// model.layers = 8", its context the field), then the memory check above. The GUI's Train live,
/// its what-if and Suggest ask this, so they refuse exactly what the runtime would.
Status preflightStart(const RunConfig& config, const MemoryCapacity& capacity, const PreflightScope& scope = {});

} // namespace bs::runtime
