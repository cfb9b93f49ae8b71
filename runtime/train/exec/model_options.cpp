// How a RunConfig and its schedule become the model's options (session_state.h).
#include "runtime/plan/config/lr_scaling.h"
#include "runtime/train/exec/session_state.h"

#include <algorithm>
#include <cmath>
#include <numeric>

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

namespace {

/// Every how many tagged micro-batches a stage samples drift: coprime with the window a, so every
/// position in the window gets sampled (a + 1). With several stages per rank the lag also depends
/// on the micro-batch's place in its group of p (paci-interleaved's D_s(i mod p)), so the period is
/// coprime with lcm(a, p) too: at a = 1, p = 2 every second micro-batch (N = 2) sampled only the
/// even ones, and a chunk whose odd micro-batches alone cross updates showed no drift at all.
int driftSampleEvery(int window, const Schedule& schedule)
{
    const int period = schedule.onePerRank() ? window : std::lcm(window, std::max(1, schedule.ranks()));
    int every = window + 1;
    while (std::gcd(every, period) != 1) {
        ++every;
    }
    return every;
}

} // namespace

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
    o.driftSampleEvery = driftSampleEvery(o.updateEvery, schedule);
    return o;
}

} // namespace bs::runtime
