#include "ui/models/comparison_row.h"

#include <algorithm>

namespace bs::ui {

ComparisonRow ComparisonRow::fromReport(
    std::string label, const profiler::Report& report, double throughput, int lagBound)
{
    ComparisonRow s;
    s.label = std::move(label);
    s.bubbleFraction = report.bubbleFraction;
    // Without a steady window the report's steady figure is the whole run's: not shown as steady.
    s.steadyBubbleFraction = report.steadyBusy >= 0 ? report.steadyBubbleFraction : -1.0;
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
