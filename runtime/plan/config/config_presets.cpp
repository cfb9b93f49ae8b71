#include "runtime/plan/config/config_presets.h"

namespace bs::runtime {

namespace {

RunConfig paciOn(const std::string& model, int microBatchSize)
{
    RunConfig c;
    c.model.preset = model;
    c.model.shape = gptPreset(model).value();
    c.schedule.name = "paci";
    c.pipeline.stages = 8;
    c.pipeline.microbatches = 8;
    c.pipeline.accum = 8;
    c.pipeline.microBatchSize = microBatchSize;
    return c;
}

} // namespace

RunConfig demoConfig()
{
    RunConfig c = paciOn("tiny", 4);
    c.training.steps = 200;
    c.training.evalInterval = 10;
    c.training.evalBatches = 8;
    // The synthetic stream's entropy floor is 1.708 nats (seed 1234, vocab 256, see
    // runtime/train/data/markov_chain.h); 1.9 asks the model to learn most of the chain.
    c.training.targetLoss = 1.9;
    return c;
}

Result<RunConfig> configPreset(const std::string& name)
{
    if (name == "demo") {
        return demoConfig();
    }
    if (name == "small") {
        RunConfig c = paciOn("small", 8);
        c.training.steps = 300;
        c.training.evalInterval = 20;
        return c;
    }
    if (name == "deep") {
        // More blocks than stages (40 over 8, d 64), so balancing has room on a CPU: one block is
        // about a fifth of a stage, the embedding and head together about a fifth of a block.
        RunConfig c = paciOn("deep", 4);
        c.pipeline.partition = "measured";
        c.device.intraOpThreads = 1; // the serial driver runs one action at a time; a second thread adds noise
        c.training.steps = 200;
        c.training.evalInterval = 10;
        c.training.evalBatches = 8;
        c.training.targetLoss = 1.9;
        return c;
    }
    if (name == "gpt2-medium") {
        RunConfig c = paciOn("gpt2-medium", 16);
        c.device.name = "cuda";
        c.training.steps = 1000;
        c.training.evalInterval = 50;
        c.optimizer.warmupSteps = 100;
        return c;
    }
    return makeError(
        ErrorCode::InvalidArgument, "unknown config preset '" + name + "'", "allowed: demo, small, deep, gpt2-medium");
}

std::vector<std::string> configPresetNames()
{
    return {"demo", "small", "deep", "gpt2-medium"};
}

} // namespace bs::runtime
