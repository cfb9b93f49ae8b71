// optimizer.lr_scaling: the learning rate and step counts of a config at its global batch.
#include "runtime/plan/config/lr_scaling.h"

#include <algorithm>
#include <cmath>

namespace bs::runtime {

double lrScale(std::string_view rule, double globalBatch, double baseGlobalBatch)
{
    if (globalBatch <= 0.0 || baseGlobalBatch <= 0.0) {
        return 1.0;
    }
    const double ratio = globalBatch / baseGlobalBatch;
    if (rule == "sqrt") {
        return std::sqrt(ratio);
    }
    if (rule == "linear") {
        return ratio;
    }
    return 1.0;
}

ScaledOptimizer scaledOptimizer(const RunConfig& c)
{
    const OptimizerConfig& o = c.optimizer;
    const double g = static_cast<double>(c.pipeline.microbatches) * c.pipeline.microBatchSize;
    const double base = o.baseGlobalBatch > 0 ? o.baseGlobalBatch : g;
    const double scale = lrScale(o.lrScaling, g, base);
    ScaledOptimizer out;
    out.lr = o.lr * scale;
    out.minLr = o.minLr * scale;
    out.stepScale = o.lrScaling == "none" || g <= 0.0 ? 1.0 : base / g;
    out.warmupSteps = static_cast<int>(std::lround(o.warmupSteps * out.stepScale));
    out.totalSteps = o.totalSteps > 0 ? std::max(1, static_cast<int>(std::lround(o.totalSteps * out.stepScale))) : 0;
    return out;
}

} // namespace bs::runtime
