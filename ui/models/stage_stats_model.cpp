#include "ui/models/stage_stats_model.h"

#include "ui/common/format.h"
#include "ui/common/palette.h"

namespace bs::ui {

StageStatsModel::StageStatsModel(QObject* parent)
    : QAbstractTableModel(parent)
{}

void StageStatsModel::setReport(const profiler::Report& report)
{
    beginResetModel();
    m_report = report;
    endResetModel();
}

int StageStatsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_report.perStage.size());
}

int StageStatsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

double StageStatsModel::raw(const profiler::StageReport& s, int column) const
{
    const auto idle = [&s](profiler::BubbleCause c) {
        return static_cast<double>(s.idleByCause[static_cast<std::size_t>(c)]);
    };
    switch (column) {
    case Busy:
        return static_cast<double>(s.busy);
    case Idle:
        return static_cast<double>(s.idle);
    case Bubble:
        return s.bubbleFraction;
    case WarmUp:
        return idle(profiler::BubbleCause::WarmUp);
    case Drain:
        return idle(profiler::BubbleCause::Drain);
    case Flush:
        return idle(profiler::BubbleCause::Flush);
    case Dependency:
        return idle(profiler::BubbleCause::Dependency);
    case Comm:
        return idle(profiler::BubbleCause::Comm);
    case PeakInflight:
        return s.peakInflight;
    case PeakMemory:
        return static_cast<double>(s.peakMemoryBytes);
    case MaxLag:
        return s.maxVersionLag;
    default:
        return 0;
    }
}

QVariant StageStatsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) {
        return {};
    }
    const auto& stage = m_report.perStage[static_cast<std::size_t>(index.row())];
    const double v = raw(stage, index.column());
    switch (role) {
    case RawValueRole:
        return v;
    case Qt::TextAlignmentRole:
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::DisplayRole:
        switch (index.column()) {
        case Bubble:
            return formatPercent(v);
        case PeakInflight:
        case MaxLag:
            return QString::number(static_cast<int>(v));
        case PeakMemory:
            return formatBytes(v);
        default:
            return formatDuration(v);
        }
    default:
        return {};
    }
}

QVariant StageStatsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole) {
        return {};
    }
    if (orientation == Qt::Vertical) {
        return tr("stage %1").arg(section);
    }
    switch (section) {
    case Busy:
        return tr("busy");
    case Idle:
        return tr("idle");
    case Bubble:
        return tr("bubble");
    case WarmUp:
        return bubbleCauseLabel(profiler::BubbleCause::WarmUp);
    case Drain:
        return bubbleCauseLabel(profiler::BubbleCause::Drain);
    case Flush:
        return bubbleCauseLabel(profiler::BubbleCause::Flush);
    case Dependency:
        return bubbleCauseLabel(profiler::BubbleCause::Dependency);
    case Comm:
        return bubbleCauseLabel(profiler::BubbleCause::Comm);
    case PeakInflight:
        return tr("in flight");
    case PeakMemory:
        return tr("peak memory");
    case MaxLag:
        return tr("max lag");
    default:
        return {};
    }
}

} // namespace bs::ui
