#pragma once

#include "base/result.h"
#include "runtime/plan/config/run_config.h"
#include "runtime/plan/partition/stage_partitioner.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace bs::cli {

/// Measures the layer units on the config's device (the training runtime's profiling pass);
/// empty when this program cannot train (then --measured is refused).
using MeasureUnits = std::function<Result<std::vector<runtime::UnitCost>>(const runtime::RunConfig&)>;

/// Registers `partition`: the stage partition a config asks for (or, with --measured, the
/// memory-bounded one over measured unit costs), with predicted stage times and memory.
void addPartitionCommand(CLI::App& app, int& exitCode, MeasureUnits measure);

} // namespace bs::cli
