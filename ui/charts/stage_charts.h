#pragma once
// Per-stage Qt Charts panels: bubble fraction by cause, memory (stacked, with a budget line), and
// the version-lag histogram against PACI's bound. Each takes plain data (StageChartData) so tests
// and the main window feed them the same way. Axes are explicit QValueAxis/QBarCategoryAxis with
// set ranges (createDefaultAxes() shows 0..1 for series filled later: toolchain.md §4).

#include "profiler/analysis/report.h"

#include <QChartView>

#include <cstdint>
#include <vector>

namespace bs::ui {

/// What the stage charts show for one run.
struct StageChartData
{
    QString title;                             ///< run label
    profiler::Report report;
    std::vector<std::int64_t> staticBytes;     ///< per stage: weights, grads, optimizer state
    std::vector<std::int64_t> paramBytes;      ///< per stage: one weight copy (stash)
    std::vector<int> lagBound;                 ///< per stage, updates; empty = no bound
    std::int64_t memoryBudgetBytes = 0;        ///< per stage; 0 = no line
};

/// Applies the house look to a chart (light theme, compact margins, legend at the bottom).
void styleChart(QChart* chart, const QString& title);

class BubbleChartView : public QChartView
{
    Q_OBJECT
public:
    explicit BubbleChartView(QWidget* parent = nullptr);
    /// Stacked bars: idle fraction of the makespan per stage, one segment per cause (percent).
    void setData(const StageChartData& data);
    /// Height of the bar of `stage` (sum over causes, percent), for tests.
    double stagePercent(int stage) const;
};

class MemoryChartView : public QChartView
{
    Q_OBJECT
public:
    explicit MemoryChartView(QWidget* parent = nullptr);
    /// Stacked bars per stage (MiB): weights + optimizer, stashed versions, activations; budget line.
    void setData(const StageChartData& data);
    double stageMiB(int stage) const;
};

class LagChartView : public QChartView
{
    Q_OBJECT
public:
    explicit LagChartView(QWidget* parent = nullptr);
    /// Percent bars: share of micro-batches per version lag, per stage; line: the bound (updates).
    void setData(const StageChartData& data);
};

} // namespace bs::ui
