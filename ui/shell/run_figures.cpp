#include "ui/shell/run_figures.h"

#include "runtime/schedule/catalogue.h"
#include "ui/common/format.h"

#include <QObject>

namespace bs::ui {

ComparisonRow summaryOf(const PredictedRun& run, const profiler::Report& report)
{
    return ComparisonRow::fromReport(scheduleDisplayName(run.result.schedule.params.name), report,
        run.result.throughputSamplesPerSecond, run.lagBound);
}

QString figuresLine(const profiler::Report& report, double throughput)
{
    return QObject::tr("bubble %1 · %2 seq/s · makespan %3")
        .arg(formatPercent(report.bubbleFraction), QString::number(throughput, 'f', 0),
            formatDuration(static_cast<double>(report.makespan)));
}

} // namespace bs::ui
