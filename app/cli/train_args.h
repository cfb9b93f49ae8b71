#pragma once
// The options of `train` (and of `compare --train`, which trains several schedules with them).
// Its own header so the simulation commands can fill it without the LibTorch runtime.

#include <cstdint>
#include <optional>
#include <string>

namespace bs::cli {

/// Everything `train` accepts. Unset optionals keep the config file's (or the demo's) value.
struct TrainArgs
{
    std::string configPath; ///< --config; empty = the embedded demo
    std::optional<std::string> schedule; ///< --schedule
    std::optional<int> stages, microbatches, accum, microBatchSize, steps, threads, evalInterval;
    std::optional<int> stagesPerRank; ///< --stages-per-rank v (pipeline.stages_per_rank)
    std::optional<std::string> model;    ///< --model preset
    std::optional<std::int64_t> seed;    ///< --seed (model init and data)
    std::optional<std::string> data;     ///< --data spec
    std::optional<double> targetLoss;    ///< --target-loss
    bool stopAtTarget = false; ///< --stop-at-target (SessionOptions::stopAtTarget)
    std::optional<std::string> device;   ///< --device cpu|cuda|cuda:N (device.name)
    std::optional<std::string> dtype;    ///< --dtype fp32|bf16 (model.dtype)
    std::string backend;                 ///< --backend nccl|gloo (distributed; empty = the device's default)
    bool reference = false;              ///< --reference
    std::string outDir;                  ///< --out; empty = no run directory
    bool overwrite = false;              ///< --overwrite
    bool json = false;                   ///< --json: print the summary object on stdout
    std::string executor = "serial";     ///< --executor serial|threaded (one thread per stage)
    bool distributed = false;            ///< --distributed: this process is one rank (torchrun env)
    double timeoutS = 60.0;              ///< --timeout: bound on each wait for another rank (distributed)
    std::optional<int> checkpointEvery;  ///< --checkpoint-every N (training.checkpoint_every)
    std::string resumeDir;               ///< --resume DIR: continue DIR's run from its checkpoint
    bool recompute = false;              ///< --recompute (model.recompute)
    std::optional<std::string> lrScaling; ///< --lr-scaling sqrt|linear|none (optimizer.lr_scaling)
    std::optional<std::string> partition; ///< --partition flops|measured|N,N,... (pipeline.partition)
};

} // namespace bs::cli
