#include "ui/tuning/figures_table.h"

#include "ui/common/format.h"

#include <QObject>

#include <algorithm>

namespace bs::ui {

namespace {

// QLabel's rich text has no per-row tooltips: what a figure is says itself in its row.
QString row(const QString& name, const QString& value)
{
    return QStringLiteral("<tr><td>%1</td><td align='right'>%2</td></tr>").arg(name, value);
}

QString bold(const QString& text)
{
    return QStringLiteral("<b>") + text + QStringLiteral("</b>");
}

QString grey(const QString& text)
{
    return QStringLiteral("<span style='color:#6b7280'>") + text.toHtmlEscaped() + QStringLiteral("</span>");
}

} // namespace

QString timeToTargetText(const PredictedRun& run, const PredictedRun* reference)
{
    if (!run.timeToTarget) { // set by predictRun() only with a model of time to target
        return {};
    }
    const runtime::TimeToTargetFigures& t = *run.timeToTarget;
    if (t.inSeconds) {
        return QObject::tr("%1 ± %2").arg(formatDuration(t.seconds * 1e9), formatDuration(t.spreadSeconds * 1e9));
    }
    if (reference && reference->timeToTarget && reference->timeToTarget->seconds > 0) {
        // No run reached the target: E_min is unknown, but it is the same for both settings.
        const double ratio = t.seconds / reference->timeToTarget->seconds;
        return QObject::tr("%1× %2 ± %3")
            .arg(ratio, 0, 'f', 2)
            .arg(toQt(scheduleDisplayName(reference->result.schedule.params.name)))
            .arg(ratio * t.spreadSeconds / std::max(t.seconds, 1e-12), 0, 'f', 2);
    }
    return {};
}

QString figuresTable(const Prediction& prediction, bool measured)
{
    const PredictedRun& run = prediction.primary;
    const auto& r = run.result;
    std::int64_t peak = 0;
    for (const auto& s : r.report.perStage) {
        peak = std::max(peak, s.peakMemoryBytes);
    }
    const std::int64_t budget = prediction.config.memoryBudgetBytes;
    const bool overBudget = run.memoryKnown && budget > 0 && peak > budget;
    const QString memory = (run.memoryKnown ? bold(formatBytes(static_cast<double>(peak))) : QObject::tr("—"))
        + (overBudget ? QObject::tr(" <span style='color:#b91c1c'>over budget</span>") : QString());
    const QString drift = bold(QObject::tr("%1 update(s)").arg(run.lagBound));
    const int batches = std::max(1, r.schedule.params.batches);
    QString rows;
    if (measured) {
        rows += row(QObject::tr("throughput"),
            run.throughputKnown ? bold(QObject::tr("%1 seq/s").arg(r.throughputSamplesPerSecond, 0, 'f', 1))
                                : QObject::tr("—"));
        // A steady window needs three batches (the first fills, the last drains): none is no figure.
        rows += row(QObject::tr("bubble"),
            bold(formatPercent(r.report.bubbleFraction))
                + grey(r.report.steadyBusy >= 0
                        ? QObject::tr(" (steady %1)").arg(formatPercent(r.report.steadyBubbleFraction))
                        : QObject::tr(" (%1 batch(es): none steady)").arg(batches)));
    } else {
        // The headline: time to target, from the runs' measured statistics.
        const PredictedRun* reference = prediction.baseline ? &*prediction.baseline : nullptr;
        const QString time = timeToTargetText(run, reference);
        if (!time.isEmpty()) {
            rows += row(QObject::tr("<b>time to target</b>"),
                QStringLiteral("<b style='color:#1d4ed8'>%1</b>").arg(time.toHtmlEscaped()));
        } else if (!prediction.config.goodput) {
            rows += row(QObject::tr("time to target"), grey(QObject::tr("— no noise scale yet")));
        } else if (run.timeToTarget) { // relative, and nothing to be relative to: its two factors
            rows += row(QObject::tr("time to target"),
                grey(QObject::tr("efficiency %1 · staleness %2")
                         .arg(run.timeToTarget->efficiency, 0, 'f', 2)
                         .arg(run.timeToTarget->stalenessFactor, 0, 'f', 2)));
        }
        // The steady state's figures (the bubble of the few batches the timeline shows, warm-up
        // and drain included, is in the table and the lane's caption, named so).
        if (run.steady.reached) {
            rows += row(QObject::tr("steady throughput"),
                run.throughputKnown ? bold(QObject::tr("%1 seq/s").arg(run.steady.samplesPerSecond, 0, 'f', 1))
                                    : QObject::tr("—"));
            rows += row(QObject::tr("steady bubble"), bold(formatPercent(run.steady.bubbleFraction)));
        } else {
            rows += row(QObject::tr("throughput"),
                (run.throughputKnown ? bold(QObject::tr("%1 seq/s").arg(run.steady.samplesPerSecond, 0, 'f', 1))
                                     : QObject::tr("—"))
                    + grey(QObject::tr(" never steady")));
            rows += row(QObject::tr("bubble, %1 batch(es)").arg(batches), bold(formatPercent(r.report.bubbleFraction)));
        }
    }
    rows += row(QObject::tr("peak memory / stage"), memory);
    rows += row(QObject::tr("drift bound"), drift);
    return QStringLiteral("<table cellspacing='2'>") + rows + QStringLiteral("</table>");
}

} // namespace bs::ui
