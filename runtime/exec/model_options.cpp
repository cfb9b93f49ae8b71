// How a RunConfig and its schedule become the model's options (session_state.h).
#include "runtime/exec/session_state.h"

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
    o.stages = c.pipeline.stages;
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
    const int total = c.optimizer.totalSteps > 0 ? c.optimizer.totalSteps : c.training.steps;
    o.optimizer.lr = c.optimizer.lr;
    o.optimizer.beta1 = c.optimizer.beta1;
    o.optimizer.beta2 = c.optimizer.beta2;
    o.optimizer.eps = c.optimizer.eps;
    o.optimizer.weightDecay = c.optimizer.weightDecay;
    o.optimizer.warmupSteps = static_cast<int>(std::lround(c.optimizer.warmupSteps * updatesPerBatch));
    o.optimizer.totalSteps =
        c.optimizer.decay == "constant" ? 0 : static_cast<int>(std::lround(total * updatesPerBatch));
    o.optimizer.minLrRatio = c.optimizer.lr > 0.0 ? c.optimizer.minLr / c.optimizer.lr : 0.0;
    o.driftSampleEvery = o.updateEvery + 1; // coprime with the window: every position gets sampled
    return o;
}

} // namespace bs::runtime
