#pragma once
// Per-stage Qt Charts panels: bubble fraction by cause, memory (stacked, with a budget line), and
// the version-lag histogram against PACI's bound. Each takes plain data (StageChartData) so tests
// and the main window feed them the same way. Axes are explicit QValueAxis/QBarCategoryAxis with
// set ranges (createDefaultAxes() shows 0..1 for series filled later: toolchain.md §4).
// A slider move changes values, not structure, so charts update their bar sets in place and
// rebuild only when the stages, the sets or the line change (rebuilding costs several ms).

#include "profiler/analysis/report.h"

#include <QChartView>
#include <QPen>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

class QAbstractBarSeries;
class QBarCategoryAxis;
class QLineSeries;
class QValueAxis;

namespace bs::ui {

struct StageChartData;
QStringList runTags(const std::vector<StageChartData>& runs);

/// What the stage charts show for one run.
struct StageChartData
{
    QString title; ///< run label
    profiler::Report report;
    std::vector<std::int64_t> staticBytes; ///< per stage: weights, grads, optimizer state
    std::vector<std::int64_t> paramBytes; ///< per stage: one weight copy (stash)
    std::vector<int> lagBound; ///< per stage, updates; empty = no bound
    std::int64_t memoryBudgetBytes = 0; ///< per stage; 0 = no line
    /// The report's lanes are ranks holding several stages (interleaved, V): bars are titled "rank".
    bool perRank = false;
    /// False when the run's trace holds no memory figures (an imported job): no bars, a title
    /// that says so.
    bool memoryKnown = true;
};

/// Applies the house look to a chart (light theme, compact margins, legend at the bottom).
void styleChart(QChart* chart, const QString& title);

/// A bar chart over stages with an optional line; keeps its series and updates them in place.
class StageBarChartView : public QChartView
{
    Q_OBJECT
public:
    explicit StageBarChartView(QWidget* parent = nullptr);
    /// The title's size when it fits; narrower charts draw it smaller rather than elided.
    static constexpr double kTitlePointSize = 9.5;
    /// Sum over the bar sets at `stage` (for tests).
    double stageTotal(int stage) const;
    /// How many times the chart was rebuilt rather than updated (for tests).
    int rebuilds() const { return m_rebuilds; }
    /// The title as drawn: the full one when it fits the width, else its first part (the kind of
    /// chart); the full title is then the tooltip (for tests).
    QString shownTitle() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

    enum class BarKind
    {
        Stacked,
        Percent
    };
    struct Bars
    {
        QString title;
        QString yTitle;
        BarKind kind = BarKind::Stacked;
        QStringList names;
        std::vector<QColor> colors;
        std::vector<std::vector<double>> values; ///< [set][stage]
        double yMax = 1; ///< the axis ends at the first round tick at or above it
        QStringList categories; ///< x labels; empty = the stage numbers
    };
    struct Line
    {
        QString name;
        QPen pen;
        std::vector<QPointF> points; ///< x = stage index
        bool ownAxis = false; ///< right-hand axis titled axisTitle, range 0..axisMax
        QString axisTitle;
        double axisMax = 1;
    };
    void showBars(const Bars& bars, const std::optional<Line>& line);
    /// Several runs on one stage axis: at each stage one bar per run, side by side, each labelled
    /// with the stage (the title names the runs a, b, … from the left; a bar set one run lacks is
    /// 0 for it), lines mapped onto the same positions.
    static std::pair<Bars, std::optional<Line>> sideBySide(
        const std::vector<std::pair<Bars, std::optional<Line>>>& runs, const QString& title);
    /// One run: its bars; several: sideBySide() of each run's `barsOf`.
    void showRuns(
        const std::vector<StageChartData>& runs, std::pair<Bars, std::optional<Line>> (*barsOf)(const StageChartData&));

private:
    void rebuild(const Bars& bars, const std::optional<Line>& line);

    QAbstractBarSeries* m_series = nullptr;
    QLineSeries* m_line = nullptr;
    QValueAxis* m_y = nullptr;
    double m_yMax = 1; ///< the bars' top (Bars::yMax); ticks are fitted to it and the height
    QValueAxis* m_lineY = nullptr;
    /// Narrow charts (a 1280 px laptop shows three in 650 px) drop what would be elided: the
    /// legend (the toolbar's colour key names every colour), and the run names in the title.
    void fitToWidth();

    QString m_fullTitle;
    bool m_perRank = false; ///< the x axis counts ranks (each over all its chunks), not stages
    QString laneWord() const;
    QString m_axisNote; ///< value-axis titles hidden for want of room ("left axis: % idle")
    /// Tick marks and label padding beside a value axis's labels and title (measured on Qt 6.4).
    static constexpr int kAxisPaddingPx = 10;
    QStringList m_names;
    QStringList m_categories;
    int m_stages = -1;
    bool m_hasLine = false;
    bool m_lineOwnAxis = false;
    int m_rebuilds = 0;
};

class BubbleChartView : public StageBarChartView
{
    Q_OBJECT
public:
    explicit BubbleChartView(QWidget* parent = nullptr);
    /// Stacked bars: idle fraction of the makespan per stage, one segment per cause (percent).
    void setData(const StageChartData& input);
    /// Both compared runs at once (one bar per run at each stage); one run: as setData(run).
    void setRuns(const std::vector<StageChartData>& runs);
    double stagePercent(int stage) const { return stageTotal(stage); }

private:
    static std::pair<Bars, std::optional<Line>> barsOf(const StageChartData& input);
};

class MemoryChartView : public StageBarChartView
{
    Q_OBJECT
public:
    explicit MemoryChartView(QWidget* parent = nullptr);
    /// Stacked bars per stage (MiB): weights + optimizer, stashed versions, activations; budget line.
    void setData(const StageChartData& input);
    /// Both compared runs at once (one bar per run at each stage); one run: as setData(run).
    void setRuns(const std::vector<StageChartData>& runs);
    double stageMiB(int stage) const { return stageTotal(stage); }

private:
    static std::pair<Bars, std::optional<Line>> barsOf(const StageChartData& input);
};

class LagChartView : public StageBarChartView
{
    Q_OBJECT
public:
    explicit LagChartView(QWidget* parent = nullptr);
    /// Percent bars: share of micro-batches per version lag, per stage; line: the bound (updates).
    void setData(const StageChartData& input);
    /// Both compared runs at once (one bar per run at each stage); one run: as setData(run).
    void setRuns(const std::vector<StageChartData>& runs);

private:
    static std::pair<Bars, std::optional<Line>> barsOf(const StageChartData& input);
};

/// Tags telling runs apart on a shared stage axis: a, b, … from the left (the title names them).

} // namespace bs::ui
