#include "app/cli/cli_common.h"

#include "app/cli/option_checks.h"
#include "app/cli/partition_option.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/recompute_costs.h"
#include "runtime/plan/sim/tuner.h"
#include "runtime/plan/sim/unit_cost_model.h"

#include <cmath>
#include <iostream>

namespace bs::cli {

int reportError(const Error& error)
{
    std::cerr << "error: " << error.message << '\n';
    if (!error.context.empty()) {
        std::cerr << "  at: " << error.context << '\n';
    }
    switch (error.code) {
    case ErrorCode::InvalidArgument:
    case ErrorCode::ParseError:
    case ErrorCode::IoError: // a path that cannot be read or written is bad input too
    case ErrorCode::Unavailable:
        return kExitUsage; // refused: not in this build, or not expressible (the reason says)
    default:
        return kExitFailure; // failed while running: diverged, a schedule of ours deadlocked, internal
    }
}

void SimulationOptions::addTo(CLI::App& app, bool withSchedule)
{
    if (withSchedule) {
        scheduleOption = app.add_option("--schedule", schedule, "Schedule name (see `bubblescope-cli schedules`)")
                             ->capture_default_str();
    }
    app.add_option("-p,--stages", stages, "Pipeline stages p")->capture_default_str();
    microbatchesOption = app.add_option("-m,--microbatches", microbatches,
                                        "Micro-batches per global batch (paci: defaults to --accum)")
                             ->capture_default_str();
    app.add_option("-a,--accum", accum, "PACI accumulation window a (0 = microbatches)")->capture_default_str();
    app.add_option("-n,--batches", batches, "Global batches to run")->capture_default_str();
    app.add_option("-k,--extra-depth", extraDepth, "Async schedules: extra in-flight micro-batches per stage")
        ->capture_default_str();
    app.add_option("--stages-per-rank", stagesPerRank,
                   "Stages (model chunks) per rank for interleaved schedules (0 = the schedule's own)")
        ->capture_default_str();
    costOption = app.add_option("--cost", cost,
                        "Per-action costs F,I,W[,U] in ms per rank (full backward B = I+W; a "
                        "rank's v chunks split them; not with --model)")
                     ->capture_default_str();
    app.add_option("--overlap-cost", overlapMs,
                   "dualpipev: one overlapped forward-and-backward pair per rank in ms (0 = F + B, no overlap gain)")
        ->capture_default_str()
        ->check(finiteIn(0, runtime::kMaxActionMs, "ms"));
    commOption =
        app.add_option("--comm", commMs, "Communication time per transfer in ms (hand costs; not with --model)")
            ->capture_default_str()
            ->check(finiteIn(0, runtime::kMaxActionMs, "ms"));
    app.add_option("--model", model, "Derive costs from a GPT preset: tiny, small, deep, gpt2-medium");
    app.add_option("-b,--micro-batch-size", microBatchSize, "Sequences per micro-batch")->capture_default_str();
    deviceProfileOption =
        app.add_option("--device-profile", deviceProfile, "With --model: cpu, a100, h100, h200")->capture_default_str();
    app.add_option("--partition", partition, partitionOptionHelp())->capture_default_str()->check(partitionSpec());
    app.add_option("--unit-costs", unitCosts, unitCostsOptionHelp());
    app.add_flag("--recompute", recompute,
        "Activation recompute (model.recompute): every backward runs its stage's forward again, and an "
        "in-flight micro-batch keeps only the stage's input (with --model; hand costs: the time only)");
}

Result<runtime::SimulationRequest> SimulationOptions::request(const std::string& scheduleName, bool comparing) const
{
    runtime::SimulationRequest req;
    req.schedule.name = scheduleName;
    req.schedule.stages = stages;
    req.schedule.microbatches = microbatches;
    req.schedule.accum = accum;
    req.schedule.batches = batches;
    req.schedule.extraDepth = extraDepth;
    req.schedule.stagesPerRank = stagesPerRank;
    req.microBatchSize = microBatchSize;
    const bool microbatchesGiven = microbatchesOption && microbatchesOption->count() > 0;
    const runtime::ScheduleInfo* info = runtime::findSchedule(scheduleName);
    if (comparing && info && !info->takesAccumWindow()) {
        req.schedule.accum = 0; // in a comparison, --accum only shapes the rows that take a window
    }
    // Without --microbatches, m comes from the window (a windowed schedule's global batch is one
    // accumulation window); the catalogue's resolver says what (m, a) mean for this schedule.
    if (auto pipeline = runtime::resolvePipeline(scheduleName, stages,
            microbatchesGiven || req.schedule.accum == 0 ? microbatches : 0, req.schedule.accum, 0)) {
        req.schedule.microbatches = pipeline->microbatches;
    }
    if (comparing && info
        && (!info->asynchronous || info->fixedDepth)) { // and --extra-depth the async rows that take it
        req.schedule.extraDepth = 0;
    }
    if (comparing && info && info->placement != runtime::Placement::Loop) { // --stages-per-rank: the loop rows
        req.schedule.stagesPerRank = 0;
    }
    if (stages < 1 || stages > runtime::limits::kMaxStages) {
        return makeError(ErrorCode::InvalidArgument, "stages: got " + std::to_string(stages),
                         "allowed: 1.." + std::to_string(runtime::limits::kMaxStages));
    }
    auto given = [](const CLI::Option* option) { return option && option->count() > 0; };
    for (const CLI::Option* handCost : {costOption, commOption}) {
        if (!model.empty() && given(handCost)) {
            return makeError(ErrorCode::InvalidArgument,
                handCost->get_name() + " does not apply with --model: the model and --device-profile give the costs",
                "allowed: --model PRESET [--device-profile NAME], or hand costs --cost F,I,W[,U] [--comm MS]");
        }
    }
    if (model.empty() && given(deviceProfileOption)) {
        return makeError(ErrorCode::InvalidArgument,
            "--device-profile does not apply without --model: hand costs (--cost) are already times",
            "allowed: --model tiny|small|deep|gpt2-medium --device-profile NAME");
    }
    if (!model.empty()) {
        auto shape = gptPreset(model);
        if (!shape) {
            return shape.error();
        }
        auto device = runtime::deviceProfile(deviceProfile);
        if (!device) {
            return device.error();
        }
        auto split = cliPartition(partition, unitCosts, *shape, req.schedule, microBatchSize);
        if (!split) {
            return split.error();
        }
        auto costs = !split->unitCosts.empty() ? runtime::costModelFromUnitCosts(*shape, split->unitCosts,
                         split->unitCostsMicroBatch, split->unitsPerStage, microBatchSize, *device)
            : split->unitsPerStage.empty()
            ? runtime::costModelFromGpt(*shape,
                runtime::gptCostChunks(req.schedule.name, stages, req.schedule.stagesPerRank), microBatchSize, *device)
            : runtime::costModelFromUnits(*shape, split->unitsPerStage, microBatchSize, *device);
        if (!costs) {
            return costs.error();
        }
        req.costs = std::move(*costs);
        if (recompute) {
            req.costs = runtime::withRecompute(std::move(req.costs), *shape, microBatchSize);
        }
    } else {
        if (partition != "flops" || !unitCosts.empty()) {
            return makeError(ErrorCode::InvalidArgument,
                "--partition and --unit-costs need --model: hand costs (--cost) are per stage",
                "--partition: allowed with --model tiny|small|deep|gpt2-medium");
        }
        auto costs = runtime::costModelFromString(cost, stages, commMs);
        if (!costs) {
            return costs.error();
        }
        req.costs = std::move(*costs);
        if (recompute) { // no shape: the costs are times only (bytes unknown), so only F joins each B
            req.costs = runtime::withRecompute(std::move(req.costs), GptShape{}, microBatchSize);
        }
    }
    for (auto& stage : req.costs.stages) {
        stage.forwardBackward = static_cast<TimeNs>(std::llround(overlapMs * 1e6));
    }
    return req;
}

} // namespace bs::cli
