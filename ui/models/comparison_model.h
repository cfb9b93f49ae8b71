#pragma once
// Side-by-side figures of two or more runs: one row per metric, one column per run, and a last
// column with the second run relative to the first (ratio for throughput, difference otherwise).
// Column headers put a run's label on two lines (name, then measured / predicted): the table sits
// beside the charts on a laptop screen; the full label is the header's tooltip.
// Adapts ComparisonRow values; computes nothing beyond the difference column.

#include "ui/models/comparison_row.h"

#include <QAbstractTableModel>

#include <vector>

namespace bs::ui {

class ComparisonModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum class Metric
    {
        BubbleFraction,
        SteadyBubbleFraction,
        Throughput,
        Makespan,
        PeakMemory,
        MaxVersionLag,
        LagBound,
        MeanDrift, ///< measured on tensors (ComparisonRow::drift); raw −1 = not measured
        MaxDrift,
        TimeToTarget,
        StagesPerRank, ///< v and the placement ("2 · loop"); no difference
    };
    static constexpr int kMetricCount = 11;
    /// Qt::UserRole on a run cell: the raw number (double) the cell shows.
    static constexpr int RawValueRole = Qt::UserRole;

    explicit ComparisonModel(QObject* parent = nullptr);

    void setRuns(std::vector<ComparisonRow> runs);
    const std::vector<ComparisonRow>& runs() const { return m_runs; }
    static double value(const ComparisonRow& run, Metric metric);
    /// The row's short name (the vertical header) and its spelled-out meaning (its tooltip).
    static QString metricName(Metric metric);
    static QString metricDescription(Metric metric);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString formatValue(Metric metric, double v) const;
    /// A drift cell's tooltip: the run's drift per model stage, with its rank and chunk.
    static QString driftPerStage(const ComparisonRow& run);
    QVariant differenceCell(Metric metric, int role) const;
    bool hasDifferenceColumn() const { return m_runs.size() >= 2; }

    std::vector<ComparisonRow> m_runs;
};

} // namespace bs::ui
