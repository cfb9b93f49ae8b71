#pragma once
// The smallest real training run the runtime tests use: a 4-layer, 32-wide GPT over 64 tokens,
// trained for a few steps in well under a second. Dropout is 0 (it draws from torch's global
// generator, so results would depend on execution order) and the trace is off unless a test
// turns it on. Header-only; for tests across runtime/ and ui/.

#include "runtime/plan/config/run_config.h"

#include <string>

namespace bs::test {

inline runtime::RunConfig tinyRunConfig(const std::string& schedule, int steps, int stages = 4, int microbatches = 4)
{
    runtime::RunConfig c;
    c.model.preset = "";
    c.model.shape.layers = 4;
    c.model.shape.dModel = 32;
    c.model.shape.heads = 2;
    c.model.shape.seqLen = 16;
    c.model.shape.vocab = 64;
    c.model.shape.dropout = 0.0;
    c.pipeline.stages = stages;
    c.pipeline.microbatches = microbatches;
    c.pipeline.accum = 0;
    c.pipeline.microBatchSize = 2;
    c.schedule.name = schedule;
    c.optimizer.lr = 1e-2;
    c.optimizer.warmupSteps = 1;
    c.optimizer.minLr = 1e-3;
    c.training.steps = steps;
    c.training.evalInterval = 0;
    c.profiling.trace = false;
    return c;
}

} // namespace bs::test
