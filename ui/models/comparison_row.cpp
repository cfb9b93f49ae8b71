#include "ui/models/comparison_row.h"

#include <algorithm>

namespace bs::ui {

ComparisonRow ComparisonRow::fromReport(
    std::string label, const profiler::Report& report, double throughput, int lagBound)
{
    ComparisonRow s;
    s.label = std::move(label);
    s.bubbleFraction = report.bubbleFraction;
    s.steadyBubbleFraction = report.steadyBubbleFraction;
    s.throughput = throughput;
    s.makespan = report.makespan;
    for (const auto& stage : report.perStage) {
        s.peakMemoryBytes = std::max(s.peakMemoryBytes, stage.peakMemoryBytes);
        s.maxVersionLag = std::max(s.maxVersionLag, stage.maxVersionLag);
    }
    s.lagBound = lagBound;
    return s;
}

} // namespace bs::ui
