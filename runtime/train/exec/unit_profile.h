#pragma once
// The measured partition's profiling pass as the programs call it: every layer unit timed and
// sized on the config's device (stage 0's: cuda:N, cuda = cuda:0, else the CPU). Torch-free.
// Implemented twice, like run_session.h: inside the training runtime (stage_partition.cpp) and by
// the client that forwards to the loaded module (runtime/train/module/run_session_client.cpp).

#include "base/result.h"
#include "runtime/plan/config/run_config.h"
#include "runtime/plan/partition/stage_partitioner.h"

#include <vector>

namespace bs::runtime {

/// One UnitCost per layer unit of config.model.shape (layerUnitCount()). Errors: no such device,
/// no training runtime (the client), a failing pass.
Result<std::vector<UnitCost>> measureLayerUnits(const RunConfig& config);

} // namespace bs::runtime
