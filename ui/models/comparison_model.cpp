#include "ui/models/comparison_model.h"

#include "ui/common/format.h"

#include <QBrush>
#include <QColor>
#include <QStringList>

#include <cmath>

namespace bs::ui {

ComparisonModel::ComparisonModel(QObject* parent)
    : QAbstractTableModel(parent)
{}

void ComparisonModel::setRuns(std::vector<ComparisonRow> runs)
{
    beginResetModel();
    m_runs = std::move(runs);
    endResetModel();
}

double ComparisonModel::value(const ComparisonRow& run, Metric metric)
{
    switch (metric) {
    case Metric::BubbleFraction:
        return run.bubbleFraction;
    case Metric::SteadyBubbleFraction:
        return run.steadyBubbleFraction;
    case Metric::Throughput:
        return run.throughputKnown ? run.throughput : -1.0; // -1: unknown, shown as "—"
    case Metric::Makespan:
        return static_cast<double>(run.makespan);
    case Metric::PeakMemory:
        return run.memoryKnown ? static_cast<double>(run.peakMemoryBytes) : -1.0;
    case Metric::MaxVersionLag:
        return run.maxVersionLag;
    case Metric::LagBound:
        return run.lagBound;
    case Metric::MeanDrift:
        return run.drift.measured() ? run.drift.meanDrift : -1.0;
    case Metric::MaxDrift:
        return run.drift.measured() ? run.drift.maxDrift : -1.0;
    case Metric::TimeToTarget:
        return run.timeToTargetS;
    case Metric::StagesPerRank:
        return run.stagesPerRank;
    }
    return 0;
}

int ComparisonModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : kMetricCount;
}

int ComparisonModel::columnCount(const QModelIndex& parent) const
{
    if (parent.isValid()) {
        return 0;
    }
    return static_cast<int>(m_runs.size()) + (hasDifferenceColumn() ? 1 : 0);
}

QString ComparisonModel::formatValue(Metric metric, double v) const
{
    switch (metric) {
    case Metric::BubbleFraction:
        return formatPercent(v);
    case Metric::SteadyBubbleFraction:
        return v < 0 ? tr("—") : formatPercent(v); // -1: no steady window (under three batches)
    case Metric::Throughput:
        return v < 0 ? tr("—") : QString(QString::number(v, 'f', v >= 100 ? 0 : 1) + tr(" seq/s"));
    case Metric::Makespan:
        return formatDuration(v);
    case Metric::PeakMemory:
        return v < 0 ? tr("—") : formatBytes(v);
    case Metric::MaxVersionLag:
        return QString::number(static_cast<int>(v));
    case Metric::LagBound:
        return v < 0 ? tr("n/a") : QString::number(static_cast<int>(v));
    case Metric::MeanDrift:
    case Metric::MaxDrift:
        return v < 0 ? tr("—") : QString::number(v, 'e', 2);
    case Metric::TimeToTarget:
        return v < 0 ? tr("—") : QString(QString::number(v, 'f', 2) + tr(" s"));
    case Metric::StagesPerRank:
        return QString::number(static_cast<int>(v));
    }
    return {};
}

QVariant ComparisonModel::differenceCell(Metric metric, int role) const
{
    if (metric == Metric::StagesPerRank) {
        return {}; // a layout, not a figure
    }
    const double a = value(m_runs[0], metric);
    const double b = value(m_runs[1], metric);
    const bool drift = metric == Metric::MeanDrift || metric == Metric::MaxDrift;
    if (drift && (a < 0 || b < 0)) {
        return {}; // a run without tensors has no drift to compare
    }
    if ((metric == Metric::Throughput || metric == Metric::PeakMemory || metric == Metric::SteadyBubbleFraction)
        && (a < 0 || b < 0)) {
        return {}; // unknown for one of them (an imported job; a run too short to have a steady window)
    }
    if (role == RawValueRole) {
        if (metric == Metric::TimeToTarget) {
            return a >= 0 && b > 0 ? a / b : 0.0;
        }
        return metric == Metric::Throughput || metric == Metric::Makespan ? (b != 0 ? a / b : 0.0) : a - b;
    }
    if (role == Qt::ForegroundRole) {
        // Green where the first run is better: less bubble/time/memory, more throughput.
        const bool higherIsBetter = metric == Metric::Throughput;
        const bool lowerIsBetter = metric == Metric::BubbleFraction || metric == Metric::SteadyBubbleFraction
            || metric == Metric::Makespan || metric == Metric::PeakMemory || drift
            || (metric == Metric::TimeToTarget && a >= 0 && b >= 0);
        if ((higherIsBetter && a > b) || (lowerIsBetter && a < b)) {
            return QBrush(QColor(0x15, 0x80, 0x3d));
        }
        if ((higherIsBetter && a < b) || (lowerIsBetter && a > b)) {
            return QBrush(QColor(0xb9, 0x1c, 0x1c));
        }
        return {};
    }
    if (role == Qt::TextAlignmentRole) {
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (metric) {
    case Metric::BubbleFraction:
    case Metric::SteadyBubbleFraction:
        return QString(QString::number((a - b) * 100.0, 'f', 1) + tr(" pp"));
    case Metric::Throughput:
    case Metric::Makespan:
        return b != 0 ? QString(QString::number(a / b, 'f', 2) + QStringLiteral("×")) : QString();
    case Metric::PeakMemory:
        return QString((a >= b ? QStringLiteral("+") : QStringLiteral("−")) + formatBytes(std::fabs(a - b)));
    case Metric::MaxVersionLag:
    case Metric::LagBound:
        return QString::number(static_cast<int>(a - b));
    case Metric::MeanDrift:
    case Metric::MaxDrift:
        return QString((a >= b ? QStringLiteral("+") : QStringLiteral("−")) + QString::number(std::fabs(a - b), 'e', 2));
    case Metric::TimeToTarget:
        return a >= 0 && b > 0 ? QString(QString::number(a / b, 'f', 2) + QStringLiteral("×")) : QString();
    case Metric::StagesPerRank:
        break;
    }
    return {};
}

QVariant ComparisonModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) {
        return {};
    }
    const auto metric = static_cast<Metric>(index.row());
    const auto column = static_cast<std::size_t>(index.column());
    if (column >= m_runs.size()) {
        return differenceCell(metric, role);
    }
    const double v = value(m_runs[column], metric);
    switch (role) {
    case Qt::DisplayRole:
        if (metric == Metric::StagesPerRank && !m_runs[column].placement.empty()) {
            return QString(formatValue(metric, v) + QStringLiteral(" · ") + toQt(m_runs[column].placement));
        }
        return formatValue(metric, v);
    case RawValueRole:
        return v;
    case Qt::ToolTipRole:
        if ((metric == Metric::MeanDrift || metric == Metric::MaxDrift) && m_runs[column].drift.measured()) {
            return driftPerStage(m_runs[column]);
        }
        return {};
    case Qt::TextAlignmentRole:
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    default:
        return {};
    }
}

QString ComparisonModel::driftPerStage(const ComparisonRow& run)
{
    QStringList lines;
    lines << tr("Measured drift per model stage (%1 samples in all):").arg(run.drift.samples);
    for (const runtime::StageDrift& s : run.drift.stages) {
        const QString where = run.stagesPerRank > 1 ? tr("stage %1 (rank %2, chunk %3)").arg(s.stage).arg(s.rank).arg(s.chunk)
                                                    : tr("stage %1").arg(s.stage);
        lines << (s.samples > 0 ? tr("%1: mean %2, max %3, lag %4")
                                      .arg(where, QString::number(s.meanDrift, 'e', 2), QString::number(s.maxDrift, 'e', 2))
                                      .arg(s.maxLag)
                                : tr("%1: no samples").arg(where));
    }
    return lines.join(QLatin1Char('\n'));
}

namespace {

/// The run's label on lines at its " · " (name, then measured / simulated / predicted) and at an
/// opened run's " (" (directory, then schedule), so a column is only as wide as its longest part
/// and the table fits beside the charts.
QString twoLineLabel(const std::string& label)
{
    QString text = toQt(label);
    const QString dot = QStringLiteral(" · ");
    if (const auto at = text.lastIndexOf(dot); at > 0) {
        text.replace(at, dot.size(), QStringLiteral("\n"));
    }
    if (const auto at = text.indexOf(QStringLiteral(" (")); at > 0) {
        text.replace(at, 1, QStringLiteral("\n"));
    }
    return text;
}

} // namespace

QString ComparisonModel::metricName(Metric metric)
{
    switch (metric) {
    case Metric::BubbleFraction:
        return tr("bubble");
    case Metric::SteadyBubbleFraction:
        return tr("steady bubble");
    case Metric::Throughput:
        return tr("throughput");
    case Metric::Makespan:
        return tr("makespan");
    case Metric::PeakMemory:
        return tr("peak memory");
    case Metric::MaxVersionLag:
        return tr("max lag");
    case Metric::LagBound:
        return tr("drift bound");
    case Metric::MeanDrift:
        return tr("measured drift");
    case Metric::MaxDrift:
        return tr("max drift");
    case Metric::TimeToTarget:
        return tr("time to target");
    case Metric::StagesPerRank:
        return tr("stages / rank");
    }
    return {};
}

QString ComparisonModel::metricDescription(Metric metric)
{
    switch (metric) {
    case Metric::BubbleFraction:
        return tr("Idle share of every rank's compute lane over the whole run");
    case Metric::SteadyBubbleFraction:
        return tr("Idle share without the first warm-up and the last drain: measured over the run's steady "
                  "window (— under three batches), predicted for one batch of the steady state");
    case Metric::Throughput:
        return tr("Sequences per second: measured over the whole run; predicted in the steady state");
    case Metric::Makespan:
        return tr("Time from the first action to the last");
    case Metric::PeakMemory:
        return tr("Peak memory of the largest rank: weights, optimizer state, stashes and activations of all "
                  "the stages (chunks) it holds");
    case Metric::MaxVersionLag:
        return tr("Largest weight-version lag a backward saw (updates between its forward and it)");
    case Metric::LagBound:
        return tr("The schedule's proven drift bound in updates (n/a: synchronous)");
    case Metric::MeanDrift:
        return tr("Weight drift ‖θ_B − θ_F‖/‖θ_F‖ measured on the run's own tensors, the mean over every sampled "
                  "micro-batch of every model stage (chunk); hover a cell for each stage. —: simulated or predicted "
                  "(the cost model has no tensors). Synchronous schedules measure 0: forward and backward see the "
                  "same weights");
    case Metric::MaxDrift:
        return tr("The largest weight drift any model stage (chunk) measured on the run's own tensors (—: simulated "
                  "or predicted)");
    case Metric::TimeToTarget:
        return tr("Time to target (val. loss): virtual seconds until the validation loss first reached the target");
    case Metric::StagesPerRank:
        return tr("v: model stages (chunks) each rank holds, and their placement (loop: stage i on rank i mod p; "
                  "v: rank r holds r and 2p − 1 − r)");
    }
    return {};
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) {
        return {};
    }
    if (orientation == Qt::Horizontal) {
        if (section < static_cast<int>(m_runs.size())) {
            const std::string& label = m_runs[static_cast<std::size_t>(section)].label;
            return role == Qt::DisplayRole ? twoLineLabel(label) : toQt(label);
        }
        return role == Qt::DisplayRole ? tr("difference")
                                       : tr("First run vs second (× for ratios, pp for percentage points)");
    }
    if (section < 0 || section >= kMetricCount) {
        return {};
    }
    const auto metric = static_cast<Metric>(section);
    return role == Qt::DisplayRole ? metricName(metric) : metricDescription(metric);
}

} // namespace bs::ui
