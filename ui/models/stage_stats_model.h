#pragma once
// Per-stage figures of one run's report as a table: one row per stage. Adapts, never computes
// beyond unit conversion (STYLE.md B.3).

#include "profiler/analysis/report.h"

#include <QAbstractTableModel>

namespace bs::ui {

class StageStatsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        Busy,
        Idle,
        Bubble,
        WarmUp,
        Drain,
        Flush,
        Dependency,
        Comm,
        PeakInflight,
        PeakMemory,
        MaxLag,
        ColumnCount
    };
    /// Qt::UserRole: the raw number (ns, fraction, bytes or count) the cell shows.
    static constexpr int RawValueRole = Qt::UserRole;

    explicit StageStatsModel(QObject* parent = nullptr);
    void setReport(const profiler::Report& report);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    double raw(const profiler::StageReport& stage, int column) const;

    profiler::Report m_report;
};

} // namespace bs::ui
