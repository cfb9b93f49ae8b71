#include "ui/shell/run_figures.h"

#include "runtime/plan/schedule/catalogue.h"
#include "ui/common/format.h"

#include <QObject>

namespace bs::ui {

ComparisonRow summaryOf(const PredictedRun& run, const profiler::Report& report)
{
    const runtime::Schedule& schedule = run.result.schedule;
    // The run's own label (schedule, a, b; an opened run's directory): two runs of one schedule
    // at different settings get different columns, not two "PACI".
    ComparisonRow row =
        ComparisonRow::fromReport(run.label.empty() ? scheduleDisplayName(schedule.params.name) : run.label, report,
            run.result.throughputSamplesPerSecond, run.lagBound);
    row.stagesPerRank = schedule.stagesPerRank();
    row.throughputKnown = run.throughputKnown;
    row.memoryKnown = run.memoryKnown;
    if (!schedule.onePerRank()) {
        row.placement = std::string(runtime::placementName(schedule.placement));
    }
    return row;
}

QString figuresLine(const profiler::Report& report, double throughput)
{
    if (throughput < 0) { // unknown (an imported job): not shown as a figure
        return QObject::tr("bubble %1 · makespan %2")
            .arg(formatPercent(report.bubbleFraction), formatDuration(static_cast<double>(report.makespan)));
    }
    return QObject::tr("bubble %1 · %2 seq/s · makespan %3")
        .arg(formatPercent(report.bubbleFraction), QString::number(throughput, 'f', 0),
            formatDuration(static_cast<double>(report.makespan)));
}

} // namespace bs::ui
