#include "ui/tuning/figures_table.h"

#include "ui/common/format.h"

#include <QObject>

#include <algorithm>

namespace bs::ui {

QString figuresTable(const Prediction& prediction)
{
    const PredictedRun& run = prediction.primary;
    const auto& r = run.result;
    std::int64_t peak = 0;
    for (const auto& s : r.report.perStage) {
        peak = std::max(peak, s.peakMemoryBytes);
    }
    const std::int64_t budget = prediction.config.memoryBudgetBytes;
    const bool overBudget = run.memoryKnown && budget > 0 && peak > budget;
    const QString throughput =
        run.throughputKnown ? QObject::tr("%1 seq/s").arg(r.throughputSamplesPerSecond, 0, 'f', 1) : QObject::tr("—");
    return QObject::tr("<table cellspacing='2'>"
                       "<tr><td>throughput</td><td align='right'><b>%1</b></td></tr>"
                       "<tr><td>bubble</td><td align='right'><b>%2</b></td></tr>"
                       "<tr><td>peak memory / stage</td><td align='right'><b>%3</b>%4</td></tr>"
                       "<tr><td>drift bound</td><td align='right'><b>%5 update(s)</b></td></tr>"
                       "</table>")
        .arg(throughput, formatPercent(r.report.bubbleFraction),
            run.memoryKnown ? formatBytes(static_cast<double>(peak)) : QObject::tr("—"),
            overBudget ? QObject::tr(" <span style='color:#b91c1c'>over budget</span>") : QString(),
            QString::number(run.lagBound));
}

} // namespace bs::ui
