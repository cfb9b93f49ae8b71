#pragma once
// RunConfig: everything that defines a run, in one value type. The same TOML file drives the GUI,
// the CLI and a cluster job, so an exported config reproduces a tuned run exactly. This header is
// torch-free and Qt-free; TOML I/O lives in config_toml.h, checks in config_validate.h.

#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/schedule.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

/// [model]: a preset name plus the resolved shape. When read from TOML the preset's shape is
/// loaded first and explicit keys override it, so `shape` is always the shape that runs.
struct ModelConfig
{
    std::string preset = "tiny"; ///< "" = explicit shape only; else one of gptPresetNames()
    GptShape shape; ///< defaults equal the tiny preset
    /// Arithmetic of the forward/backward passes: "fp32", "bf16" (mixed precision: autocast to
    /// bf16, fp32 master weights, gradients and AdamW state), or "" = the device's default
    /// (bf16 on CUDA, fp32 on the CPU; effectiveDtype()).
    std::string dtype;
    /// Activation recompute: forwards run under no-grad keeping only each stage's input; the
    /// backward runs the forward again with grad (under PACI possibly on newer weights).
    bool recompute = false;

    /// Field-by-field (GptShape itself has no operator==).
    friend bool operator==(const ModelConfig& a, const ModelConfig& b);
};

/// [pipeline]: how the model is split and batched.
struct PipelineConfig
{
    int stages = 8; ///< p
    int microbatches = 8; ///< m per global batch
    int accum = 0; ///< a: backward passes per local update (paci); 0 = m
    int microBatchSize = 4; ///< b, sequences per micro-batch
    int extraDepth = 0; ///< k: extra in-flight depth for asynchronous schedules
    /// v: model stages (chunks) per rank; 0 = the schedule's own (1; 2 for interleaved and V ones).
    int stagesPerRank = 0;
    /// "one-per-rank", "loop" or "v"; empty = the schedule's own (it must match when given).
    std::string placement = "";
    std::vector<int> layersPerStage; ///< empty = balanced by cost; else one count per stage
    /// How the layer units (embedding, each block, final norm, head; gpt_shape.h) are grouped into
    /// stages: "flops" (blocks balanced by forward FLOPs, the default; layers_per_stage overrides),
    /// "measured" (each unit timed and sized on the run's device, the slowest stage minimised under
    /// memoryBudgetMiB; runtime/plan/partition), or "explicit" (partitionUnits, one count per stage).
    /// In TOML: partition = "flops" | "measured" | [counts per stage].
    std::string partition = "flops";
    std::vector<int> partitionUnits; ///< partition == "explicit": layer units per stage, each >= 1
    double memoryBudgetMiB = 0.0; ///< per-stage bound for the measured partition; 0 = none

    friend bool operator==(const PipelineConfig&, const PipelineConfig&) = default;
};

/// [schedule]: which catalogue schedule runs (gpipe, 1f1b, zb-h1, zb-h2, pipedream, 2bw,
/// async-1f1b, paci).
struct ScheduleConfig
{
    std::string name = "1f1b";

    friend bool operator==(const ScheduleConfig&, const ScheduleConfig&) = default;
};

/// [optimizer]: AdamW per stage with linear warm-up then cosine decay to minLr (or constant).
struct OptimizerConfig
{
    double lr = 3e-4;
    double beta1 = 0.9;
    double beta2 = 0.95;
    double eps = 1e-8;
    double weightDecay = 0.1; ///< applied to matrices only
    int warmupSteps = 10; ///< in global batches
    int totalSteps = 0; ///< length of the decay in global batches; 0 = training.steps
    double minLr = 3e-5; ///< floor of the cosine decay
    std::string decay = "cosine"; ///< "cosine" or "constant"
    /// How lr and the step counts follow the global batch G = m·b when it differs from
    /// baseGlobalBatch (runtime/plan/config/lr_scaling.h): "sqrt" (the PACI authors' rule, default),
    /// "linear" or "none".
    std::string lrScaling = "sqrt";
    /// The global batch (sequences) lr, warmup_steps and total_steps are given for; 0 = the run's
    /// first m·b (set when a run starts, so a live Apply that changes m or b rescales).
    int baseGlobalBatch = 0;

    friend bool operator==(const OptimizerConfig&, const OptimizerConfig&) = default;
};

/// [data]: where tokens come from (see runtime/train/data/token_source.h for the spec forms).
struct DataConfig
{
    std::string spec = "synthetic"; ///< "synthetic", "text:PATH" or "bin:PATH"
    double valFraction = 0.1; ///< tail of a file held out for validation
    std::int64_t seed = 1234; ///< picks the synthetic chain and every micro-batch

    friend bool operator==(const DataConfig&, const DataConfig&) = default;
};

/// [training]: how long and how often to evaluate.
struct TrainingConfig
{
    int steps = 100; ///< global batches
    std::int64_t seed = 42; ///< model initialisation and dropout
    int evalInterval = 10; ///< global batches between validation passes; 0 = never
    int evalBatches = 4; ///< validation micro-batches per pass
    std::optional<double> targetLoss; ///< validation loss that counts as "reached"
    /// Global batches between checkpoints (and one at a clean stop); 0 = none. Asynchronous
    /// schedules drain at each checkpoint (runtime/plan/rundir/checkpoint_state.h).
    int checkpointEvery = 0;

    friend bool operator==(const TrainingConfig&, const TrainingConfig&) = default;
};

/// [device]
struct DeviceConfig
{
    std::string name = "cpu"; ///< "cpu", "cuda" or "cuda:N"
    int intraOpThreads = 0; ///< LibTorch intra-op threads; 0 = library default

    friend bool operator==(const DeviceConfig&, const DeviceConfig&) = default;
};

/// [profiling]
struct ProfilingConfig
{
    bool trace = true; ///< record the per-action trace (trace.json)
    /// On a CUDA run with the trace on: record GPU kernels with CUPTI (kernel lanes, the GPU
    /// bubble). false = action times from CUDA events only (what CUPTI's overhead is measured against).
    bool cupti = true;

    friend bool operator==(const ProfilingConfig&, const ProfilingConfig&) = default;
};

struct RunConfig
{
    ModelConfig model;
    PipelineConfig pipeline;
    ScheduleConfig schedule;
    OptimizerConfig optimizer;
    DataConfig data;
    TrainingConfig training;
    DeviceConfig device;
    ProfilingConfig profiling;

    friend bool operator==(const RunConfig&, const RunConfig&) = default;
};

/// model.dtype as it runs: model.dtype, or the device's default when empty ("bf16" on CUDA,
/// "fp32" on the CPU).
std::string effectiveDtype(const RunConfig& config);

/// device.name parsed: "cpu" -> {false, -1}; "cuda" -> {true, -1} (every visible GPU, stages
/// placed contiguously); "cuda:N" -> {true, N}. Assumes a validated name (else the CPU).
struct DeviceSpec
{
    bool cuda = false;
    int index = -1; ///< -1 = not pinned to one GPU
    friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
};
DeviceSpec parseDeviceName(const std::string& name);

/// The schedule generator's knobs for this config (batches = training.steps).
ScheduleParams toScheduleParams(const RunConfig& config);

/// [schedule] and [pipeline] as the catalogue reads them (resolvePipeline(), m and a as given):
/// m, the update window, v, the batch per update. Errors name the field.
Result<PipelineSettings> resolvedPipeline(const RunConfig& config);
/// The accumulation window a as labels and the what-if's slider show it: PACI's window, m for a
/// schedule without one (PipelineSettings::shownWindow(); m when the config does not resolve).
int shownWindowOf(const RunConfig& config);

/// v: model stages (chunks) each rank holds under this config's schedule (the catalogue's
/// default when pipeline.stages_per_rank is 0; 1 for an unknown schedule).
int stagesPerRankOf(const RunConfig& config);
/// The model stages a pipelined run builds: p · v (stage i is the i-th contiguous block of layers;
/// the schedule's placement puts it on its rank). = pipeline.stages for one-per-rank schedules.
int modelStages(const RunConfig& config);

} // namespace bs::runtime
