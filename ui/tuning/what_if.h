#pragma once
// The what-if question the tuning controls ask, and its answer: the chosen schedule and the
// 1F1B-flush baseline simulated at the same (p, a, b), each with a timeline index ready to paint.
// Pure C++ (no Qt): predict() runs on a worker thread.

#include "runtime/plan/config/run_config.h"
#include "runtime/plan/sim/tuner.h"
#include "ui/timeline/timeline_index.h"
#include "ui/tuning/calibration.h"

#include <memory>
#include <string>

namespace bs::ui {

/// The what-if's run: the tiny GPT on 8 stages, PACI with a = m = 8, b = 8, on the CPU.
runtime::RunConfig defaultWhatIfRun();

struct WhatIfConfig
{
    /// The settings, in the one vocabulary a run, the CLI, File ▸ Export and live Apply use
    /// (runtime/plan/config/run_config.h): schedule.name, pipeline.stages, pipeline.microbatches m,
    /// pipeline.accum, pipeline.micro_batch_size b, model, device.name (where a real run trains),
    /// and everything else an opened run had (training.steps, optimizer, data). The what-if
    /// simulates a = accum() micro-batches per global batch (PACI's window; m for the others); a
    /// schedule with a window runs m micro-batches a batch, the run's own when they are whole
    /// windows it accepts (toRunConfig: an opened run at m = 16, a = 4), else the fewest whole
    /// windows its rules take (runtime::GptScenario: paci-interleaved at p = 4, a = 2 simulates m = 4).
    runtime::RunConfig run = defaultWhatIfRun();
    std::string baseline = "1f1b"; ///< compared side by side; empty = none
    std::string deviceProfile = "cpu"; ///< the device profile the what-if simulates with (cost_model.h)
    int batches = 4; ///< global batches simulated
    std::int64_t memoryBudgetBytes = 0; ///< per stage; 0 = none
    /// Measured per-stage times to simulate with instead of the device profile's (null = none).
    CalibrationPtr calibration;
    /// Layer units measured on the run's device at unitCostsMicroBatch (Balance stages ▸ Measure):
    /// the stage times of run.pipeline.partition are then the units' sums; empty = FLOP times.
    std::vector<runtime::UnitCost> unitCosts;
    int unitCostsMicroBatch = 0;
    /// The statistics of the runs of this model (measured noise scale, fitted staleness): with
    /// them the what-if predicts time to target, its headline. Null = no run measured them.
    std::shared_ptr<const runtime::GoodputModel> goodput;

    /// The accumulation window simulated: pipeline.accum, or m when it is 0.
    int accum() const { return runtime::shownWindowOf(run); }
    int microBatchSize() const { return run.pipeline.microBatchSize; }
    const std::string& schedule() const { return run.schedule.name; }
    int globalBatch() const { return accum() * microBatchSize(); }
    friend bool operator==(const WhatIfConfig&, const WhatIfConfig&) = default;
};

/// One simulated schedule, ready for the views.
struct PredictedRun
{
    std::string label; ///< "PACI a=8 b=8"
    runtime::SimulationResult result;
    std::shared_ptr<const TimelineIndex> index;
    std::vector<std::int64_t> staticBytes; ///< per stage: weights + grads + optimizer state
    std::vector<std::int64_t> paramBytes; ///< per stage: one weight copy
    std::vector<std::int64_t> activationBytes; ///< per stage: one in-flight micro-batch
    int lagBound = 0; ///< runtime::versionLagBound()
    /// The steady state of the settings (runtime::steadyThroughput, same costs): its throughput and
    /// per-batch bubble, free of the warm-up and drain the few batches on the timeline hold. Set by
    /// predictRun() only; reached = false for measured runs and where no steady state was found.
    runtime::SteadyThroughput steady;
    long batchPerUpdate = 0; ///< samples behind one update (PipelineSettings::batchPerUpdate)
    /// With WhatIfConfig::goodput and a steady state: predicted time to target at the steady
    /// throughput (seconds, or E_min samples per (seq/s) when no run reached the target: inSeconds).
    std::optional<runtime::TimeToTargetFigures> timeToTarget;
    /// False for an imported torch.profiler job: its trace says neither how many sequences a
    /// micro-batch held nor how many bytes a stage held, so throughput and memory show as unknown
    /// ("—"), never as the 0 seq/s and micro-batch counts read as bytes they would otherwise be.
    bool throughputKnown = true;
    bool memoryKnown = true;
};

struct Prediction
{
    WhatIfConfig config;
    PredictedRun primary;
    std::optional<PredictedRun> baseline;
    double computeMs = 0; ///< wall time of predict() itself
};
using PredictionPtr = std::shared_ptr<const Prediction>;

/// The layer units per stage the what-if predicts: runtime::choosePartition() of config.run
/// (pipeline.partition: flops, measured, explicit counts; the budget pipeline.memory_budget_mib)
/// with config.unitCosts at config's b; empty = the plain FLOPs split (no partition asked for).
Result<std::vector<int>> whatIfPartition(const WhatIfConfig& config);
/// The scenario `config` describes for `schedule`: its partition, recompute (model.recompute) and
/// measured unit costs. Errors name the field.
Result<runtime::GptScenario> scenarioFor(const WhatIfConfig& config, const std::string& schedule);
/// Simulates one schedule of `config` and indexes its trace. With config.calibration the action
/// times are the calibration's fit for that schedule at b (runtime::withFittedTimes); memory
/// figures stay the model's.
Result<PredictedRun> predictRun(const WhatIfConfig& config, const std::string& schedule);
/// Simulates the chosen schedule and the baseline. Thread-safe; typically a few ms.
Result<PredictionPtr> predict(const WhatIfConfig& config);

/// The RunConfig that reproduces `config` (TOML export, cluster launch scripts, live Apply):
/// config.run, with accum written out for the schedules that take a window (a = m when it was 0)
/// and 0 for the others (the validator rejects it there); where the window's schedule refuses m
/// (paci-interleaved: a multiple of p), m is the one the what-if simulates. The profile is only
/// the what-if's.
runtime::RunConfig toRunConfig(const WhatIfConfig& config);
/// toRunConfig for another machine (File ▸ Export: TOML, cluster scripts): a GPU device profile
/// with "Run on" left at cpu exports device "cuda", so a cluster job asks for GPUs.
runtime::RunConfig toExportConfig(const WhatIfConfig& config);
/// The what-if settings of a run configuration (opening config.toml or a run directory): the
/// whole RunConfig, and the device profile that fits its device (cpu, else h100).
WhatIfConfig fromRunConfig(const runtime::RunConfig& config);

/// "PACI a=8 b=8" style label; " v=2" added for ranks holding several stages.
std::string runLabel(const std::string& schedule, int accum, int microBatchSize, int stagesPerRank = 1);
/// runLabel of a run's configuration: its window a (runtime::shownWindowOf), b and v.
std::string runLabel(const runtime::RunConfig& config);
/// The v `schedule` is simulated with: the panel's pipeline.stages_per_rank where the schedule's
/// catalogue traits take it (defaultStagesPerRank..maxStagesPerRank), else 0 (its own).
int stagesPerRankFor(const WhatIfConfig& config, const std::string& schedule);
/// "PACI", "1F1B-flush", "GPipe", ... for a catalogue name (the name itself when unknown).
std::string scheduleDisplayName(const std::string& schedule);

} // namespace bs::ui
