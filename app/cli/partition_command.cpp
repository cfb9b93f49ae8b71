// `bubblescope-cli partition`: prints the stage partition a config asks for, per stage its layer
// units, predicted forward + backward time and memory, next to the FLOPs split under the same
// costs. --measured times every unit on the config's device first (the training runtime's
// profiling pass) and picks the memory-bounded split (runtime/plan/partition).
#include "app/cli/partition_command.h"

#include "app/cli/cli_common.h"
#include "app/cli/table.h"
#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/config/config_validate.h"
#include "runtime/plan/partition/partition_choice.h"
#include "runtime/plan/partition/unit_profile_io.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <optional>

namespace bs::cli {

namespace {

/// "emb + 0-3", "4-7 + norm", "head": what a stage holds.
std::string unitsText(const GptShape& shape, int firstUnit, int count)
{
    std::string out;
    auto add = [&out](const std::string& part) { out += (out.empty() ? "" : " + ") + part; };
    const int end = firstUnit + count;
    if (firstUnit == 0) {
        add("emb");
    }
    const int firstBlock = std::max(firstUnit, 1) - 1;
    const int lastBlock = std::min(end, shape.layers + 1) - 1; // exclusive
    if (lastBlock > firstBlock) {
        add(lastBlock - firstBlock == 1 ? std::to_string(firstBlock)
                                        : std::to_string(firstBlock) + "-" + std::to_string(lastBlock - 1));
    }
    if (firstUnit <= shape.layers + 1 && shape.layers + 1 < end) {
        add("norm");
    }
    if (end == shape.layers + 3) {
        add("head");
    }
    return out;
}

struct PartitionCommand
{
    std::string configPath;
    std::string preset;
    bool measured = false;
    bool json = false;
    std::optional<double> budgetMiB;
    MeasureUnits measure;

    int run() const
    {
        runtime::RunConfig config = runtime::demoConfig();
        if (!configPath.empty() && !preset.empty()) {
            return reportError(makeError(ErrorCode::InvalidArgument, "--config and --preset are exclusive; allowed: one of them",
                                         "--preset"));
        }
        if (!configPath.empty()) {
            auto loaded = runtime::loadRunConfig(configPath);
            if (!loaded) {
                return reportError(loaded.error());
            }
            config = std::move(*loaded);
        } else if (!preset.empty()) {
            auto p = runtime::configPreset(preset);
            if (!p) {
                return reportError(Error{ErrorCode::InvalidArgument, p.error().message, "--preset: " + p.error().context});
            }
            config = std::move(*p);
        }
        if (budgetMiB) {
            config.pipeline.memoryBudgetMiB = *budgetMiB;
        }
        std::vector<runtime::UnitCost> units;
        if (measured) {
            config.pipeline.partition = "measured";
            config.pipeline.partitionUnits.clear();
            config.pipeline.layersPerStage.clear();
        }
        if (Status valid = runtime::validate(config); !valid) {
            return reportError(valid.error());
        }
        if (measured) {
            if (!measure) {
                return reportError(makeError(ErrorCode::Unavailable,
                    "--measured needs the training runtime; this build has no LibTorch", "--measured"));
            }
            auto m = measure(config);
            if (!m) {
                return reportError(m.error());
            }
            units = std::move(*m);
        }
        auto choice = runtime::choosePartition(config, units);
        if (!choice) {
            return reportError(choice.error());
        }
        runtime::RunConfig flopsConfig = config;
        flopsConfig.pipeline.partition = "flops";
        flopsConfig.pipeline.partitionUnits.clear();
        flopsConfig.pipeline.memoryBudgetMiB = 0;
        auto flops = runtime::choosePartition(flopsConfig, choice->units);
        if (json) {
            nlohmann::json j = *choice;
            j["micro_batch_size"] = config.pipeline.microBatchSize; // a unit profile: simulate/tune --unit-costs
            j["device"] = config.device.name;
            j["model"] = runtime::shapeJson(config.model.shape);
            if (flops) {
                j["flops_split"] = {{"units_per_stage", flops->plan.unitCount}, {"stage_ms", flops->plan.stageMs},
                                    {"imbalance", flops->plan.imbalance()}};
            }
            std::cout << j.dump(2) << "\n";
            return kExitOk;
        }
        const GptShape& shape = config.model.shape;
        const runtime::PartitionPlan& plan = choice->plan;
        Table t({"stage", "units", "holds", "ms/mb", "of mean", "memory"});
        int first = 0;
        for (std::size_t s = 0; s < plan.unitCount.size(); ++s) {
            t.addRow({std::to_string(s), std::to_string(plan.unitCount[s]), unitsText(shape, first, plan.unitCount[s]),
                      fixed(plan.stageMs[s], 3), percent(plan.meanMs > 0 ? plan.stageMs[s] / plan.meanMs : 1.0),
                      bytesOrUnits(plan.stageBytes[s], true)});
            first += plan.unitCount[s];
        }
        std::cout << "partition " << choice->mode << " (" << (choice->costsMeasured ? "costs measured on " + config.device.name : "FLOP estimates")
                  << "), " << config.schedule.name << " p=" << config.pipeline.stages << " b=" << config.pipeline.microBatchSize
                  << (choice->budgetBytes > 0 ? ", budget " + bytesOrUnits(choice->budgetBytes, true) + " per stage" : std::string())
                  << "\n"
                  << t.render() << "slowest / mean stage: " << fixed(plan.imbalance(), 3) << "\n";
        if (flops && choice->mode != "flops") {
            std::cout << "the flops split under the same costs: " << fixed(flops->plan.imbalance(), 3) << " (units";
            for (int c : flops->plan.unitCount) {
                std::cout << " " << c;
            }
            std::cout << ")\n";
        }
        std::cout << "in a config: partition = [";
        for (std::size_t s = 0; s < plan.unitCount.size(); ++s) {
            std::cout << (s ? ", " : "") << plan.unitCount[s];
        }
        std::cout << "]\n";
        return kExitOk;
    }
};

} // namespace

void addPartitionCommand(CLI::App& app, int& exitCode, MeasureUnits measure)
{
    auto cmd = std::make_shared<PartitionCommand>();
    cmd->measure = std::move(measure);
    auto* sub = app.add_subcommand("partition", "Show a config's stage partition with predicted stage times and memory");
    sub->add_option("-c,--config", cmd->configPath, "Run config (TOML); default: the embedded demo");
    sub->add_option("--preset", cmd->preset, "A config preset instead of --config: demo, small, deep, gpt2-medium");
    sub->add_flag("--measured", cmd->measured,
                  "Time and size every layer unit on the config's device, then pick the split that minimises the "
                  "slowest stage within pipeline.memory_budget_mib");
    sub->add_option("--budget-mib", cmd->budgetMiB, "Per-stage memory budget in MiB (overrides pipeline.memory_budget_mib; 0 = none)");
    sub->add_flag("--json", cmd->json, "Print JSON instead of a table");
    sub->callback([cmd, &exitCode] { exitCode = cmd->run(); });
}

} // namespace bs::cli
