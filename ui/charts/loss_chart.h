#pragma once
// Time-series panels over the runs' training metrics (live RunSession runs or opened run
// directories): loss (train, validation, target line and each run's time-to-target marked),
// drift norm, throughput. Every view plots against virtual or wall time (TimeAxis); runs without
// wall times (simulated, old run directories) are left out of a wall-time plot and the title says
// so. Simulated runs have no metrics; the views then say so instead of drawing axes. Rebuilt on
// every update (a few series of at most a few thousand points).

#include "ui/bridge/run_backend.h"
#include "ui/charts/metric_series.h"

#include <QChartView>
#include <QPointF>
#include <QString>

#include <optional>
#include <vector>

class QLineSeries;
class QResizeEvent;
class QValueAxis;

namespace bs::ui {

/// One run's metrics as the panels plot them.
struct LossCurve
{
    QString label;
    std::vector<runtime::BatchMetrics> samples;
};

/// Shared axis handling of the time-series views.
class TimeSeriesChartView : public QChartView
{
    Q_OBJECT
public:
    explicit TimeSeriesChartView(QWidget* parent = nullptr);
    /// Replaces the runs and redraws. `targetLoss` > 0 is used by the loss view only.
    void setCurves(const std::vector<LossCurve>& curves, double targetLoss = 0);
    void setTimeAxis(TimeAxis axis);
    TimeAxis timeAxis() const { return m_axis; }
    /// True when at least one series was drawn.
    bool hasData() const { return m_hasData; }
    /// True when some run with samples was left out because it has no wall times.
    bool hidesRuns() const { return m_hidden > 0; }
    /// The line colour of curve `index` of setCurves() (runColor: the same in the three views and
    /// in the panel's key, which names the runs; the charts have no legend of their own).
    static QColor curveColor(int index);

protected:
    struct Plot
    {
        QChart* chart = nullptr;
        QValueAxis* x = nullptr;
        QValueAxis* y = nullptr;
    };
    /// Draws the series of the current curves into a fresh chart (the view owns it afterwards).
    virtual void draw() = 0;
    /// A fresh chart titled `title`; returns it for draw() to fill.
    QChart* beginChart(const QString& title);
    /// Adds axes spanning [0, xMax] × [yMin, yMax] (padded) and attaches every series. Ticks fall
    /// on round numbers, as many as the view's size has room for (again on every resize).
    Plot finishChart(QChart* chart, double xMax, double yMin, double yMax, const QString& yTitle);
    void resizeEvent(QResizeEvent* event) override;
    /// Short title drawn on the chart; `tip` (the whole story) is the view's tooltip.
    void setTitle(QChart* chart, const QString& title, const QString& tip);
    /// Title suffix listing why some runs are not drawn ("" when all are).
    QString hiddenNote() const;
    void markHidden() { ++m_hidden; }
    void markDrawn() { m_hasData = true; }
    /// The value axis in "1.0e-03" labels (drift) for the chart being drawn.
    void useScientificY() { m_scientificY = true; }
    QString axisTitle() const;

    std::vector<LossCurve> m_curves;
    double m_targetLoss = 0;

private:
    void redraw();
    /// Sets both axes' ticks for the current size (finishChart, resizeEvent).
    void fitTicks();

    TimeAxis m_axis = TimeAxis::Virtual;
    bool m_hasData = false;
    int m_hidden = 0;
    Plot m_plot; ///< the axes of the current chart (null without data)
    double m_xMax = 1, m_yMin = 0, m_yMax = 1;
    bool m_scientificY = false;
};

class LossChartView final : public TimeSeriesChartView
{
    Q_OBJECT
public:
    explicit LossChartView(QWidget* parent = nullptr);
    /// Per curve given to setCurves(): where its time-to-target marker sits on the current axis
    /// (nullopt: no target, never reached, or not drawn). Equals timeToTarget() of its samples.
    const std::vector<std::optional<double>>& targetTimes() const { return m_targetTimes; }

protected:
    void draw() override;

private:
    std::vector<std::optional<double>> m_targetTimes;
};

/// Mean and max over stages of the sampled relative drift ‖θ_B − θ_F‖/‖θ_F‖ (each stage's mean so
/// far), one solid (mean) and one dashed (max) line per run.
class DriftChartView final : public TimeSeriesChartView
{
    Q_OBJECT
public:
    explicit DriftChartView(QWidget* parent = nullptr);

protected:
    void draw() override;
};

/// The gradient noise scale B_simple = tr(Σ)/|G|² (samples) each run measured on its own
/// gradients (metrics.jsonl "noise"), one line per run: the batch past which each sample buys
/// less progress, growing as the loss falls.
class NoiseScaleChartView final : public TimeSeriesChartView
{
    Q_OBJECT
public:
    explicit NoiseScaleChartView(QWidget* parent = nullptr);

protected:
    void draw() override;
};

/// Tokens per second so far, on the chosen clock, one line per run.
class ThroughputChartView final : public TimeSeriesChartView
{
    Q_OBJECT
public:
    explicit ThroughputChartView(QWidget* parent = nullptr);

protected:
    void draw() override;
};

} // namespace bs::ui
