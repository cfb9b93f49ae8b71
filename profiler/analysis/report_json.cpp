#include "profiler/analysis/report_json.h"

namespace bs::profiler {

namespace {

double seconds(TimeNs t) { return static_cast<double>(t) * 1e-9; }

nlohmann::json causes(const std::array<TimeNs, kBubbleCauseCount>& idle)
{
    nlohmann::json out = nlohmann::json::object();
    for (int c = 0; c < kBubbleCauseCount; ++c) {
        out[std::string(bubbleCauseName(static_cast<BubbleCause>(c)))] = seconds(idle[static_cast<std::size_t>(c)]);
    }
    return out;
}

} // namespace

nlohmann::json toJson(const StageReport& stage)
{
    nlohmann::json histogram = nlohmann::json::object();
    for (const auto& [lag, count] : stage.versionLagHistogram) {
        histogram[std::to_string(lag)] = count;
    }
    return {
        {"stage", stage.stage},
        {"busy", seconds(stage.busy)},
        {"idle", seconds(stage.idle)},
        {"bubble_fraction", stage.bubbleFraction},
        {"idle_by_cause", causes(stage.idleByCause)},
        {"peak_inflight", stage.peakInflight},
        {"peak_memory_bytes", stage.peakMemoryBytes},
        {"max_version_lag", stage.maxVersionLag},
        {"version_lag_histogram", histogram},
        {"peak_weight_versions", stage.peakWeightVersions},
    };
}

nlohmann::json toJson(const Report& report)
{
    nlohmann::json perStage = nlohmann::json::array();
    for (const auto& stage : report.perStage) {
        perStage.push_back(toJson(stage));
    }
    return {
        {"makespan", seconds(report.makespan)},
        {"bubble_fraction", report.bubbleFraction},
        {"steady_bubble_fraction", report.steadyBubbleFraction},
        {"span_bubble_fraction", report.spanBubbleFraction},
        {"utilization", report.utilization},
        {"idle_by_cause", causes(report.idleByCause)},
        {"per_stage", perStage},
    };
}

} // namespace bs::profiler
