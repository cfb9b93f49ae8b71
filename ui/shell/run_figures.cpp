#include "ui/shell/run_figures.h"

#include "runtime/plan/schedule/catalogue.h"
#include "ui/common/format.h"

#include <QObject>

namespace bs::ui {

ComparisonRow summaryOf(const PredictedRun& run, const profiler::Report& report, FiguresOf figures)
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
    if (figures == FiguresOf::Prediction && run.steady.batchesSimulated > 0) { // predictRun() found it
        row.steadyBubbleFraction = run.steady.reached ? run.steady.bubbleFraction : -1.0;
        row.throughput = run.steady.samplesPerSecond; // never steady: the longest simulation's
        if (run.timeToTarget && run.timeToTarget->seconds > 0 && run.timeToTarget->inSeconds) {
            row.timeToTargetS = run.timeToTarget->seconds;
        }
    }
    return row;
}

QString predictedFiguresLine(const PredictedRun& run)
{
    const auto& r = run.result;
    const QString steady = run.steady.reached
        ? QObject::tr("steady %1 seq/s, bubble %2")
              .arg(QString::number(run.steady.samplesPerSecond, 'f', 0), formatPercent(run.steady.bubbleFraction))
        : QObject::tr("%1 seq/s over %2 batches, never steady")
              .arg(QString::number(run.steady.samplesPerSecond, 'f', 0))
              .arg(run.steady.batchesSimulated);
    return steady
        + QObject::tr(" · %1 batch(es) shown: bubble %2, makespan %3")
              .arg(r.schedule.params.batches)
              .arg(formatPercent(r.report.bubbleFraction), formatDuration(static_cast<double>(r.report.makespan)));
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
