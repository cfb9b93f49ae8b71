#pragma once
// Learning-rate rescaling when the global batch changes (optimizer.lr_scaling), as the PACI
// authors do it (TrainGPT.py): with G = m·b sequences and G0 = optimizer.base_global_batch,
//   sqrt:   lr × √(G/G0)        linear: lr × G/G0        none: lr
// and, for sqrt and linear, the step counts the optimizer's schedule is given in (warmup_steps,
// and total_steps when set) × G0/G, so the schedule spans the same number of sequences. The run's
// length (training.steps) is what the user asks and is not rescaled. Torch-free: the runtime, the
// simulator and the GUI read the same numbers.

#include "runtime/plan/config/run_config.h"

#include <string_view>

namespace bs::runtime {

/// lr's multiplier for `globalBatch` against `baseGlobalBatch` (1 when either is ≤ 0 or rule "none").
double lrScale(std::string_view rule, double globalBatch, double baseGlobalBatch);

struct ScaledOptimizer
{
    double lr = 0.0; ///< the peak learning rate in force (min_lr keeps its ratio to it)
    double minLr = 0.0;
    int warmupSteps = 0; ///< global batches of this config's size
    int totalSteps = 0; ///< 0 = training.steps (not rescaled: the run's own length)
    double stepScale = 1.0; ///< G0/G applied to the step counts (1 for "none")
};

/// `config`'s optimizer at its own m·b (base 0 = that m·b: nothing changes).
ScaledOptimizer scaledOptimizer(const RunConfig& config);

} // namespace bs::runtime
