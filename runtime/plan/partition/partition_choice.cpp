#include "runtime/plan/partition/partition_choice.h"

#include "runtime/plan/schedule/catalogue.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace bs::runtime {

Result<PartitionChoice> choosePartition(const RunConfig& config, const std::vector<UnitCost>& measured)
{
    const GptShape& shape = config.model.shape;
    const PipelineConfig& p = config.pipeline;
    PartitionChoice choice;
    choice.mode = p.partition;
    choice.costsMeasured = !measured.empty();
    choice.units = measured.empty() ? flopsUnitCosts(shape, p.microBatchSize) : measured;
    if (static_cast<int>(choice.units.size()) != layerUnitCount(shape)) {
        return makeError(ErrorCode::Internal,
            "unit costs for " + std::to_string(choice.units.size()) + " units, the model has "
                + std::to_string(layerUnitCount(shape)),
            "model.layers");
    }
    choice.budgetBytes = static_cast<std::int64_t>(std::llround(p.memoryBudgetMiB * 1024.0 * 1024.0));
    ScheduleParams params = toScheduleParams(config);
    auto demand = stageDemand(params);
    if (!demand) {
        return demand.error();
    }
    // Interleaved and V placements split the layers into p · v model stages; each takes the
    // stated bound of the rank that holds it (bounds are per rank: an over-estimate per chunk).
    const int stages = modelStages(config);
    if (stages != p.stages) {
        const std::vector<int> rankOf =
            rankOfStageFor(findSchedule(config.schedule.name)->placement, p.stages, stages / p.stages);
        StageDemand perChunk;
        for (int s = 0; s < stages; ++s) {
            const auto r = static_cast<std::size_t>(rankOf[static_cast<std::size_t>(s)]);
            perChunk.inflight.push_back(r < demand->inflight.size() ? demand->inflight[r] : 1);
            perChunk.weightVersions.push_back(r < demand->weightVersions.size() ? demand->weightVersions[r] : 1);
        }
        *demand = std::move(perChunk);
    }
    const PartitionProblem problem{choice.units, stages, *demand, choice.budgetBytes};
    std::vector<int> counts;
    if (p.partition == "measured") {
        auto plan = partitionStages(problem);
        if (!plan) {
            return plan.error();
        }
        counts = plan->unitCount;
    } else if (p.partition == "explicit") {
        counts = p.partitionUnits;
    } else if (p.partition == "flops") {
        auto part = partitionLayers(shape, stages, p.microBatchSize, p.layersPerStage);
        if (!part) {
            return part.error();
        }
        counts = part->unitCount;
    } else {
        return makeError(ErrorCode::InvalidArgument,
            "pipeline.partition = \"" + p.partition
                + "\" is not allowed; allowed values: \"flops\", \"measured\" or an "
                  "array of layer units per stage",
            "pipeline.partition");
    }
    auto part = partitionFromUnits(shape, stages, counts);
    if (!part) {
        return part.error();
    }
    choice.layersPerStage = part->layerCount;
    choice.plan = evaluatePartition(problem, counts);
    // The budget bounds every partition, not only the one the partitioner picks.
    for (std::size_t s = 0; s < choice.plan.stageBytes.size() && choice.budgetBytes > 0; ++s) {
        if (choice.plan.stageBytes[s] > choice.budgetBytes) {
            return makeError(ErrorCode::InvalidArgument,
                "stage " + std::to_string(s) + " of the " + p.partition + " partition needs "
                    + std::to_string(choice.plan.stageBytes[s] / (1024 * 1024)) + " MiB, over the budget of "
                    + std::to_string(choice.budgetBytes / (1024 * 1024))
                    + " MiB; allowed: partition = \"measured\" or a "
                      "larger budget",
                "pipeline.memory_budget_mib");
        }
    }
    return choice;
}

void to_json(nlohmann::json& j, const PartitionChoice& c)
{
    nlohmann::json units = nlohmann::json::array();
    for (const UnitCost& u : c.units) {
        units.push_back({{"forward_ms", u.forwardMs}, {"backward_ms", u.backwardMs}, {"static_bytes", u.staticBytes},
            {"param_bytes", u.paramBytes}, {"activation_bytes", u.activationBytes}});
    }
    j = {{"mode", c.mode}, {"costs", c.costsMeasured ? "measured" : "flops"}, {"units_per_stage", c.plan.unitCount},
        {"layers_per_stage", c.layersPerStage}, {"stage_ms", c.plan.stageMs}, {"stage_bytes", c.plan.stageBytes},
        {"slowest_ms", c.plan.slowestMs}, {"mean_ms", c.plan.meanMs}, {"imbalance", c.plan.imbalance()},
        {"budget_bytes", c.budgetBytes}, {"unit_costs", units}};
}

} // namespace bs::runtime
