// How a RunConfig and its schedule become the model's options (session_state.h).
#include "runtime/exec/session_state.h"

#include "runtime/config/lr_scaling.h"

#include <cmath>

namespace bs::runtime {

/// Micro-batches one update applies, read from the schedule's first update on the last stage.
int updateWindow(const Schedule& schedule)
{
    for (const Action& a : schedule.programs.back()) {
        if (a.kind == ActionKind::Update) {
            return a.lastMb - a.firstMb + 1;
        }
    }
    return schedule.params.microbatches;
}

ModelOptions modelOptions(const RunConfig& c, const Schedule& schedule)
{
    ModelOptions o;
    o.shape = c.model.shape;
    o.stages = modelStages(c); // p · v chunks; the schedule puts each on its rank
    o.microBatchSize = c.pipeline.microBatchSize;
    o.layersPerStage = c.pipeline.layersPerStage;
    if (c.pipeline.partition == "explicit") {
        o.unitsPerStage = c.pipeline.partitionUnits; // "measured": the run session profiles and fills it
    }
    o.seed = static_cast<std::uint64_t>(c.training.seed);
    o.weights = schedule.weights;
    o.updateEvery = updateWindow(schedule);
    // The config counts warm-up and decay in global batches; a stage may update several times per batch.
    const double updatesPerBatch = static_cast<double>(c.pipeline.microbatches) / static_cast<double>(o.updateEvery);
    // optimizer.lr_scaling: lr and the schedule's step counts at this config's global batch.
    const ScaledOptimizer scaled = scaledOptimizer(c);
    const int total = scaled.totalSteps > 0 ? scaled.totalSteps : c.training.steps;
    o.optimizer.lr = scaled.lr;
    o.optimizer.beta1 = c.optimizer.beta1;
    o.optimizer.beta2 = c.optimizer.beta2;
    o.optimizer.eps = c.optimizer.eps;
    o.optimizer.weightDecay = c.optimizer.weightDecay;
    o.optimizer.warmupSteps = static_cast<int>(std::lround(scaled.warmupSteps * updatesPerBatch));
    o.optimizer.totalSteps =
        c.optimizer.decay == "constant" ? 0 : static_cast<int>(std::lround(total * updatesPerBatch));
    o.optimizer.minLrRatio = c.optimizer.lr > 0.0 ? c.optimizer.minLr / c.optimizer.lr : 0.0;
    o.recompute = c.model.recompute;
    o.driftSampleEvery = o.updateEvery + 1; // coprime with the window: every position gets sampled
    return o;
}

} // namespace bs::runtime
