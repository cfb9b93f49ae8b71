#include "runtime/config/run_config.h"

namespace bs::runtime {

bool operator==(const ModelConfig& a, const ModelConfig& b)
{
    const GptShape& x = a.shape;
    const GptShape& y = b.shape;
    return a.preset == b.preset && x.layers == y.layers && x.dModel == y.dModel && x.heads == y.heads
        && x.seqLen == y.seqLen && x.vocab == y.vocab && x.tiedHead == y.tiedHead && x.dropout == y.dropout;
}

ScheduleParams toScheduleParams(const RunConfig& config)
{
    ScheduleParams params;
    params.name = config.schedule.name;
    params.stages = config.pipeline.stages;
    params.microbatches = config.pipeline.microbatches;
    params.accum = config.pipeline.accum;
    params.batches = config.training.steps;
    params.extraDepth = config.pipeline.extraDepth;
    return params;
}

} // namespace bs::runtime
