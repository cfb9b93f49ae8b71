#pragma once
// The boundary between the torch-free programs (bubblescope-cli, bubblescope) and the LibTorch
// training runtime, which is a shared module loaded with dlopen when a run starts
// (libbubblescope-runtime-cpu.so against Debian's LibTorch 1.13, libbubblescope-runtime-cuda.so
// against PyPI's CUDA LibTorch). Programs that never train (simulate, tune, export, the GUI's
// simulated runs) thus never load libtorch and its ~290 libraries.
//
// Both sides are compiled from the same sources with the same compiler, so C++ types cross the
// boundary as they are; the module exports one extern "C" symbol returning this table, and the
// loader refuses a module whose ABI number or layout key differs (a module left from an older
// build). Objects made in the module (sessions, trace snapshots) keep pointers into its code, so
// a loaded module is never unloaded.

#include "base/result.h"
#include "runtime/plan/config/run_config.h"
#include "runtime/plan/rundir/run_metrics.h"
#include "runtime/train/dist/dist_env.h"
#include "runtime/train/dist/dist_train.h"
#include "runtime/train/exec/run_session.h"
#include "runtime/train/exec/unit_profile.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <memory>
#include <vector>

namespace bs::runtime {

/// One training run inside the module: RunSession's operations (see run_session.h).
class ModuleSession
{
public:
    virtual ~ModuleSession() = default;
    virtual Status runSteps(int count) = 0;
    virtual Status run() = 0;
    virtual Status finish() = 0;
    virtual void requestStop() = 0;
    virtual Status requestApply(const RunConfig& wanted) = 0;
    virtual std::vector<AppliedChange> appliedChanges() const = 0;
    virtual std::vector<BatchMetrics> pollMetrics() = 0;
    virtual int stepsDone() const = 0;
    virtual RunSummary summary() const = 0;
    virtual std::shared_ptr<const profiler::TraceSnapshot> trace() const = 0;
    virtual const RunConfig& config() const = 0;
};

/// Bumped whenever this table or ModuleSession changes.
inline constexpr int kRuntimeModuleAbi =
    4; // 2: requestApply takes a RunConfig; 3: SessionOptions::resume, checkpoints; 4: measureLayerUnits

/// Sizes of the types that cross the boundary: a module built from other sources differs here.
constexpr std::size_t runtimeModuleLayoutKey()
{
    return sizeof(RunConfig) * 1000003u + sizeof(SessionOptions) * 10007u + sizeof(RunSummary) * 101u
        + sizeof(BatchMetrics) * 7u + sizeof(AppliedChange) + sizeof(DistEnv) + sizeof(DistRunOptions) + sizeof(Error);
}

struct RuntimeModuleApi
{
    int abi = 0;
    std::size_t layoutKey = 0;
    const char* version = ""; ///< the project version the module was built as
    const char* description = ""; ///< "LibTorch 2.11.0, CUDA 13.0" (shown by `train --verbose`)
    bool cuda = false; ///< built against a CUDA LibTorch
    Status (*warmUp)(const RunConfig& config) = nullptr;
    Result<std::unique_ptr<ModuleSession>> (*create)(const RunConfig& config, const SessionOptions& options) = nullptr;
    Result<nlohmann::json> (*trainDistributed)(
        const RunConfig& config, const DistEnv& env, const DistRunOptions& options) = nullptr;
    Result<std::vector<UnitCost>> (*measureLayerUnits)(const RunConfig& config) = nullptr; ///< unit_profile.h
};

} // namespace bs::runtime

/// The module's one exported symbol.
#define BS_RUNTIME_MODULE_ENTRY "bubblescope_runtime_module_v1"
extern "C" const bs::runtime::RuntimeModuleApi* bubblescope_runtime_module_v1();
