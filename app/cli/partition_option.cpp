// --partition (partition_option.h).
#include "app/cli/partition_option.h"

#include "runtime/plan/partition/stage_partitioner.h"
#include "runtime/plan/partition/unit_profile_io.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace bs::cli {

namespace {

constexpr const char* kAllowed = "allowed: flops, balanced or layer units per stage, e.g. 3,3,3,2";

/// "3,3,3,2" as counts; nullopt when any item is not a positive integer.
std::optional<std::vector<int>> parseCounts(const std::string& text)
{
    std::vector<int> counts;
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t end = std::min(text.find(',', begin), text.size());
        int v = 0;
        const char* first = text.data() + begin;
        const char* last = text.data() + end;
        const auto [ptr, ec] = std::from_chars(first, last, v);
        if (first == last || ec != std::errc() || ptr != last || v < 1) {
            return std::nullopt;
        }
        counts.push_back(v);
        begin = end + 1;
    }
    return counts;
}

CLI::Validator specValidator(std::string word, std::string allowed)
{
    return CLI::Validator(
        [word, allowed](std::string& text) -> std::string {
            if (text == "flops" || text == word || parseCounts(text)) {
                return {};
            }
            return "'" + text + "' is not allowed; " + allowed;
        },
        "flops|" + word + "|N,N,...");
}

} // namespace

std::vector<int> partitionCounts(const std::string& text)
{
    return parseCounts(text).value_or(std::vector<int>{});
}

CLI::Validator trainPartitionSpec()
{
    return specValidator(
        "measured", "allowed: flops, measured or layer units per stage, e.g. 3,3,3,2 (pipeline.partition)");
}

std::string partitionOptionHelp()
{
    return "With --model: the stage split the prediction uses: flops (blocks by FLOPs, default), balanced (the "
           "partitioner's optimum over the --unit-costs profile, else over FLOP estimates of each layer unit), or "
           "layer units per stage, e.g. "
           "3,3,3,2 (units: embedding, each block, final norm, head; model.layers + 3 in all)";
}

CLI::Validator partitionSpec()
{
    return specValidator("balanced", kAllowed);
}

Result<std::vector<int>> unitsForPartition(const std::string& spec, const GptShape& shape,
    const runtime::ScheduleParams& schedule, int microBatch, const std::vector<runtime::UnitCost>& measured)
{
    if (spec == "flops" || spec.empty()) {
        return std::vector<int>{};
    }
    if (spec == "balanced") {
        auto demand = runtime::stageDemand(schedule);
        if (!demand) {
            return demand.error();
        }
        runtime::PartitionProblem problem{
            measured.empty() ? runtime::flopsUnitCosts(shape, microBatch) : measured, schedule.stages, *demand, 0};
        auto plan = runtime::partitionStages(problem);
        if (!plan) {
            return plan.error();
        }
        return plan->unitCount;
    }
    auto counts = parseCounts(spec);
    if (!counts) {
        return makeError(ErrorCode::InvalidArgument, "--partition: '" + spec + "' is not allowed", kAllowed);
    }
    if (auto part = partitionFromUnits(shape, schedule.stages, *counts, "--partition"); !part) {
        return part.error();
    }
    return *counts;
}

std::string unitCostsOptionHelp()
{
    return "With --model: a unit profile, the layer units measured on a device (bubblescope-cli partition --measured "
           "--json > FILE): each stage's times are its units' sums (scaled by b over the profile's b), and "
           "--partition balanced balances them";
}

Result<CliPartition> cliPartition(const std::string& spec, const std::string& unitCostsPath, const GptShape& shape,
    const runtime::ScheduleParams& schedule, int microBatch)
{
    CliPartition out;
    std::vector<runtime::UnitCost> measured;
    if (!unitCostsPath.empty()) {
        auto profile = runtime::readUnitProfile(unitCostsPath);
        if (!profile) {
            return profile.error();
        }
        if (static_cast<int>(profile->units.size()) != layerUnitCount(shape)) {
            return makeError(ErrorCode::InvalidArgument,
                "--unit-costs: the profile has " + std::to_string(profile->units.size()) + " layer units, the model "
                    + std::to_string(layerUnitCount(shape)) + " (model.layers + 3)",
                "--unit-costs: allowed: a profile of the same model (partition --measured --json)");
        }
        const GptShape& measuredOn = profile->shape.value_or(shape);
        // What the prediction reads from the model beside the units: their count (layers), the hidden
        // state handed between stages and kept under recompute (d_model, seq_len). Heads and vocab are
        // inside the measured units: a profile of the same trunk with another head serves.
        if (measuredOn.layers != shape.layers || measuredOn.dModel != shape.dModel
            || measuredOn.seqLen != shape.seqLen) {
            return makeError(ErrorCode::InvalidArgument,
                "--unit-costs: the profile was measured on " + runtime::shapeText(measuredOn) + "; the model is "
                    + runtime::shapeText(shape),
                "--unit-costs: allowed: a profile of the same model (partition --measured --json)");
        }
        out.unitCostsMicroBatch = profile->microBatchSize;
        out.unitCosts = profile->units;
        measured = runtime::unitCostsAt(profile->units, profile->microBatchSize, microBatch);
    }
    auto units = unitsForPartition(spec, shape, schedule, microBatch, measured);
    if (!units) {
        return units.error();
    }
    out.unitsPerStage = std::move(units).value();
    if (!out.unitCosts.empty() && out.unitsPerStage.empty()) {
        auto split = partitionLayers(shape, schedule.stages, microBatch); // the FLOPs split, timed by the units
        if (!split) {
            return split.error();
        }
        out.unitsPerStage = split->unitCount;
    }
    return out;
}

} // namespace bs::cli
