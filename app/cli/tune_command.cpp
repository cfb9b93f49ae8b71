#include "app/cli/tune_command.h"

#include "app/cli/cli_common.h"
#include "app/cli/goodput_runs.h"
#include "app/cli/option_checks.h"
#include "app/cli/partition_option.h"
#include "app/cli/table.h"
#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/goodput_runs.h"
#include "runtime/plan/sim/tuner.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

namespace bs::cli {

namespace {

struct TuneCommand
{
    runtime::TuneRequest request;
    std::string schedule = "paci";
    std::string model = "gpt2-medium";
    std::string device = "h100";
    double memoryGiB = 0;
    std::string partition = "flops"; ///< partition_option.h
    std::string unitCosts; ///< --unit-costs: a unit profile
    bool json = false;
    std::vector<std::string> calibrateFrom; ///< run directories whose traces calibrate the search

    int importedMicroBatchSize = 1; ///< micro-batch size of imported jobs (traces do not say)
    std::optional<double> targetLoss; ///< --target-loss: the validation loss time to target counts to
    std::string objective; ///< --objective; empty = time-to-target when a target is given, else throughput

    // The measured per-stage action times of the runs in `calibrateFrom` (calibrationFromRuns():
    // the same fit `simulate --calibrate` uses).
    Status calibrate()
    {
        auto fit = calibrationFromRuns(calibrateFrom, schedule, importedMicroBatchSize);
        if (!fit) {
            return fit.error();
        }
        request.calibration = std::move(fit).value();
        return ok();
    }

    int run()
    {
        if (!calibrateFrom.empty()) {
            if (Status s = calibrate(); !s) {
                return reportError(s.error());
            }
        }
        std::string statistics; // what the time-to-target figures come from, or why there are none
        auto stats = runtime::goodputFromRuns(calibrateFrom, targetLoss);
        // Not told: time to target when a target is given (an error below without a noise scale)
        // or a run measured a noise scale, as Suggest ranks (runtime::defaultObjective).
        std::string goal = objective;
        if (goal.empty()) {
            goal = targetLoss || runtime::defaultObjective(stats.has_value()) == runtime::TuneObjective::TimeToTarget
                ? "time-to-target"
                : "throughput";
        }
        request.objective =
            goal == "time-to-target" ? runtime::TuneObjective::TimeToTarget : runtime::TuneObjective::Throughput;
        if (stats) {
            request.goodput = std::move(stats).value();
            statistics = request.goodput->describe();
        } else if (request.objective == runtime::TuneObjective::TimeToTarget) {
            return reportError(
                makeError(ErrorCode::InvalidArgument, "objective time-to-target: " + stats.error().message,
                    "--calibrate RUN_DIR of a run of this version (it records the noise scale), or --objective "
                    "throughput"));
        } else {
            statistics = "no time to target: " + stats.error().message;
        }
        auto shape = gptPreset(model);
        if (!shape) {
            return reportError(shape.error());
        }
        auto profile = runtime::deviceProfile(device);
        if (!profile) {
            return reportError(profile.error());
        }
        if (memoryGiB < 0) {
            return reportError(makeError(ErrorCode::InvalidArgument, "memory-budget: got a negative size", "allowed: >= 0 GiB"));
        }
        request.base.schedule = schedule;
        runtime::ScheduleParams split; // "balanced" needs the schedule's stages only: no budget, FLOP ratios (b-free)
        split.name = schedule;
        split.stages = request.base.stages;
        split.microbatches = request.base.accum;
        split.accum = request.base.accum;
        split.stagesPerRank = request.base.stagesPerRank;
        auto units = cliPartition(partition, unitCosts, *shape, split, request.base.microBatchSize);
        if (!units) {
            return reportError(units.error());
        }
        request.base.unitsPerStage = std::move(units->unitsPerStage);
        request.base.unitCosts = std::move(units->unitCosts);
        request.base.unitCostsMicroBatch = units->unitCostsMicroBatch;
        request.base.shape = *shape;
        request.base.device = *profile;
        request.memoryBudgetBytes = static_cast<std::int64_t>(memoryGiB * 1024.0 * 1024.0 * 1024.0);
        auto result = runtime::tune(request);
        if (!result) {
            return reportError(result.error());
        }
        if (json) {
            nlohmann::json top = nlohmann::json::array();
            for (const auto& c : result->top) {
                top.push_back({{"accum", c.accum}, {"micro_batch_size", c.microBatchSize},
                    {"global_batch", c.accum * c.microBatchSize},
                    {"throughput_samples_per_s", c.throughputSamplesPerSecond}, {"bubble_fraction", c.bubbleFraction},
                    {"peak_memory_bytes", c.peakMemoryBytes}, {"lag_bound", c.lagBound}, {"steady", c.steady},
                    {"batch_per_update", c.batchPerUpdate}, {"efficiency", c.efficiency},
                    {"staleness_factor", c.stalenessFactor},
                    {"time_to_target_s", c.timeToTargetS ? nlohmann::json(*c.timeToTargetS) : nlohmann::json()},
                    {"time_to_target_spread_s", c.timeToTargetSpreadS}});
            }
            std::cout << nlohmann::json{{"schedule", schedule},
                {"calibration", request.calibration ? request.calibration->describe() : "device profile " + device},
                {"evaluated", result->evaluated}, {"rejected_by_memory", result->rejectedByMemory},
                {"rejected_by_lag", result->rejectedByLag}, {"rejected_by_batch", result->rejectedByBatch},
                {"objective", goal}, {"statistics", statistics},
                {"target_loss", targetLoss ? nlohmann::json(*targetLoss) : nlohmann::json()}, {"top", top},
                {"stages_per_rank", request.base.stagesPerRank}, {"recompute", request.base.recompute},
                {"units_per_stage", request.base.unitsPerStage},
                {"device_profile",
                    {{"name", profile->name},
                        {"source", request.calibration ? request.calibration->describe() : profile->source}}}}
                             .dump(2)
                      << '\n';
            return kExitOk;
        }
        const bool relative = request.goodput && !request.goodput->hasSamplesMin();
        Table table({"a", "b", "G", "B/update", "samples/s", "bubble", "efficiency", "staleness",
            relative ? "time to target (x E_min)" : "time to target", "peak memory", "lag bound"});
        for (const auto& c : result->top) {
            std::string time = "-";
            if (c.timeToTargetS) {
                time = relative ? fixed(*c.timeToTargetS * 1e3, 3) + " ms ± " + fixed(c.timeToTargetSpreadS * 1e3, 3)
                                : fixed(*c.timeToTargetS, 1) + " s ± " + fixed(c.timeToTargetSpreadS, 1);
            }
            table.addRow({std::to_string(c.accum), std::to_string(c.microBatchSize),
                std::to_string(c.accum * c.microBatchSize), std::to_string(c.batchPerUpdate),
                fixed(c.throughputSamplesPerSecond, 1) + (c.steady ? "" : " (not steady)"), percent(c.bubbleFraction),
                request.goodput ? fixed(c.efficiency, 3) : "-", request.goodput ? fixed(c.stalenessFactor, 3) : "-",
                time, bytesOrUnits(c.peakMemoryBytes, true), std::to_string(c.lagBound) + " update(s)"});
        }
        std::cout << schedule << " on " << request.base.stages
                  << (request.base.stagesPerRank > 0
                             ? " ranks of " + std::to_string(request.base.stagesPerRank) + " stages"
                             : "")
                  << " x "
                  << (request.calibration        ? request.calibration->describe()
                             : unitCosts.empty() ? "device profile " + device
                                                 : "unit profile " + unitCosts)
                  << ", " << model << ": " << result->evaluated << " (a, b) pairs simulated; rejected "
                  << result->rejectedByLag << " by drift, " << result->rejectedByMemory << " by memory, "
                  << result->rejectedByBatch << " by batch" << (request.base.recompute ? "; activation recompute" : "")
                  << (request.base.unitsPerStage.empty() ? "" : "; partition " + partition) << "\n\n"
                  << (result->top.empty() ? "no (a, b) fits: raise --max-lag or --memory-budget\n" : table.render());
        std::cout << "\nranked by " << goal
                  << (targetLoss ? " (target validation loss " + fixed(*targetLoss, 3) + ")" : "")
                  << "; throughput is the simulator's steady state; " << statistics << '\n';
        if (relative && request.objective == runtime::TuneObjective::TimeToTarget) {
            std::cout << "(no run reached the target: times are per E_min samples, for ranking)\n";
        }
        if (!request.calibration) {
            std::cout << "\ndevice profile " << profile->name << ": " << profile->source << '\n';
        }
        return result->top.empty() ? kExitFailure : kExitOk;
    }
};

} // namespace

void addTuneCommand(CLI::App& app, int& exitCode)
{
    auto cmd = std::make_shared<TuneCommand>();
    auto* sub = app.add_subcommand("tune", "Search accumulation window a and micro-batch size b for the best "
                                           "throughput within a drift bound and a memory budget");
    sub->add_option("--schedule", cmd->schedule, "Schedule to tune")->capture_default_str();
    sub->add_option("-p,--stages", cmd->request.base.stages, "Pipeline stages")
        ->capture_default_str()
        ->check(integerIn(1, 256));
    sub->add_option("--stages-per-rank", cmd->request.base.stagesPerRank,
           "Stages (model chunks) per rank for interleaved schedules (0 = the schedule's own); "
           "--stages counts ranks")
        ->capture_default_str()
        ->check(integerIn(0, runtime::kMaxStagesPerRank));
    sub->add_option("--model", cmd->model, "GPT preset: tiny, small, deep, gpt2-medium")->capture_default_str();
    sub->add_option("--device-profile", cmd->device, "cpu, a100, h100, h200")->capture_default_str();
    sub->add_option("--max-lag", cmd->request.maxLag, "Most updates a micro-batch may cross (drift bound)")
        ->capture_default_str()
        ->check(integerIn(0, 1'000'000));
    sub->add_option("--memory-budget", cmd->memoryGiB, "Per-stage memory budget in GiB (0 = none)")
        ->capture_default_str()
        ->check(finiteIn(0, 1e6, "GiB"));
    sub->add_option("--global-batch", cmd->request.globalBatch, "Only a·b equal to this (0 = any)")
        ->capture_default_str()
        ->check(integerIn(0, 1 << 30));
    sub->add_option("--accum-values", cmd->request.accumValues, "Values of a to try")
        ->delimiter(',')
        ->check(integerIn(1, runtime::limits::kMaxMicrobatches));
    sub->add_option("--micro-batch-sizes", cmd->request.microBatchSizes, "Values of b to try")
        ->delimiter(',')
        ->check(integerIn(1, 1 << 20));
    sub->add_option("--target-loss", cmd->targetLoss,
           "Validation loss that counts as reached: the --calibrate runs that reached it fit samples to target, "
           "and time to target becomes the objective")
        ->check(finiteIn(0, 1e6, ""));
    sub->add_option("--objective", cmd->objective,
           "time-to-target (samples to target from the measured noise scale and staleness / steady throughput; "
           "the default with --target-loss or when a --calibrate run measured its noise scale) or throughput")
        ->check(CLI::IsMember({"time-to-target", "throughput"}));
    sub->add_option("-n,--batches", cmd->request.base.batches,
           "Global batches simulated per candidate for bubble, memory and lag (throughput: the steady state)")
        ->capture_default_str()
        ->check(integerIn(1, 100'000));
    sub->add_option("--keep", cmd->request.keep, "How many candidates to show")
        ->capture_default_str()
        ->check(integerIn(1, 100'000));
    sub->add_option("--calibrate", cmd->calibrateFrom,
                    "Run directories or folders of torch.profiler rank traces of your own job (comma-separated) "
                    "whose measured per-stage action times replace the device profile's; runs at two or more "
                    "micro-batch sizes fit each time affine in b")
        ->delimiter(',')
        ->check(CLI::ExistingDirectory);
    sub->add_option("--calibrate-micro-batch-size", cmd->importedMicroBatchSize,
                    "Micro-batch size the imported job of --calibrate ran with (traces do not record it)")
        ->capture_default_str()
        ->check(integerIn(1, 1 << 20));
    sub->add_option("--partition", cmd->partition, partitionOptionHelp())
        ->capture_default_str()
        ->check(partitionSpec());
    sub->add_option("--unit-costs", cmd->unitCosts, unitCostsOptionHelp());
    sub->add_flag("--recompute", cmd->request.base.recompute,
        "Activation recompute (model.recompute): every backward runs its stage's forward again and an "
        "in-flight micro-batch keeps only the stage's input, so larger (a, b) fit the memory budget");
    sub->add_flag("--json", cmd->json, "Print JSON");
    sub->callback([cmd, &exitCode] { exitCode = cmd->run(); });
}

} // namespace bs::cli
