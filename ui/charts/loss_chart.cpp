#include "ui/charts/loss_chart.h"

#include "ui/charts/axis_ticks.h"
#include "ui/charts/stage_charts.h"
#include "ui/common/palette.h"

#include <QFontMetrics>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <limits>
#include <numeric>

namespace bs::ui {

namespace {

struct Range
{
    double xMax = 0;
    double yMin = std::numeric_limits<double>::max();
    double yMax = std::numeric_limits<double>::lowest();

    void add(double x, double y)
    {
        xMax = std::max(xMax, x);
        yMin = std::min(yMin, y);
        yMax = std::max(yMax, y);
    }
};

/// Keeps `series` out of the legend (markers and secondary lines: the small panels have room for
/// one legend entry per run).
void hideFromLegend(QChart* chart, QAbstractSeries* series)
{
    for (QLegendMarker* marker : chart->legend()->markers(series)) {
        marker->setVisible(false);
    }
}

/// A line series named `name` with `points`, added to `chart` in `color`.
QLineSeries* addLine(QChart* chart, const QString& name, const std::vector<QPointF>& points, const QColor& color)
{
    auto* line = new QLineSeries(chart);
    line->setName(name);
    line->setPen(QPen(color, 2));
    for (const QPointF& p : points) {
        line->append(p);
    }
    chart->addSeries(line);
    return line;
}

} // namespace

TimeSeriesChartView::TimeSeriesChartView(QWidget* parent)
    : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
}

void TimeSeriesChartView::setCurves(const std::vector<LossCurve>& curves, double targetLoss)
{
    m_curves = curves;
    m_targetLoss = targetLoss;
    redraw();
}

void TimeSeriesChartView::setTimeAxis(TimeAxis axis)
{
    if (axis == m_axis) {
        return;
    }
    m_axis = axis;
    redraw();
}

void TimeSeriesChartView::redraw()
{
    m_hasData = false;
    m_hidden = 0;
    draw();
}

QChart* TimeSeriesChartView::beginChart(const QString& title)
{
    auto* chart = new QChart();
    styleChart(chart, title);
    chart->legend()->hide(); // the panel's key names the runs in full (MetricsPanel)
    m_plot = {};
    m_scientificY = false;
    QChart* old = this->chart();
    setChart(chart);
    delete old;
    return chart;
}

TimeSeriesChartView::Plot TimeSeriesChartView::finishChart(
    QChart* chart, double xMax, double yMin, double yMax, const QString& yTitle)
{
    Plot plot{chart, new QValueAxis(chart), new QValueAxis(chart)};
    plot.x->setTitleText(axisTitle());
    plot.y->setTitleText(yTitle);
    const double pad = 0.05 * std::max(yMax - yMin, 1e-9);
    m_xMax = std::max(1e-9, xMax);
    m_yMin = yMin >= 0 ? std::max(0.0, yMin - pad) : yMin - pad;
    m_yMax = yMax + pad;
    chart->addAxis(plot.x, Qt::AlignBottom);
    chart->addAxis(plot.y, Qt::AlignLeft);
    for (QAbstractSeries* series : chart->series()) {
        series->attachAxis(plot.x);
        series->attachAxis(plot.y);
    }
    m_plot = plot;
    fitTicks();
    return plot;
}

void TimeSeriesChartView::fitTicks()
{
    if (m_plot.chart == nullptr || m_plot.chart != chart()) {
        return;
    }
    // The plot is the view less the axis labels and titles (about 70 px across, 90 px down).
    applyNiceTicks(m_plot.x, 0, m_xMax, std::max(80, width() - 70));
    // A time-axis title wider than the plot would be cut: it goes (the tooltip says it) instead.
    const int plotWidth =
        m_plot.chart->plotArea().isEmpty() ? width() - 70 : static_cast<int>(m_plot.chart->plotArea().width());
    const bool titleFits = QFontMetrics(m_plot.x->titleFont()).horizontalAdvance(m_plot.x->titleText()) <= plotWidth;
    m_plot.x->setTitleVisible(titleFits);
    QString tip = toolTip().section(QStringLiteral(" [x: "), 0, 0);
    setToolTip(titleFits ? tip : tip + QStringLiteral(" [x: ") + m_plot.x->titleText() + QStringLiteral("]"));
    applyNiceTicks(m_plot.y, m_yMin, m_yMax, std::max(60, height() - 90));
    if (m_scientificY) {
        m_plot.y->setLabelFormat(QStringLiteral("%.1e"));
    }
}

void TimeSeriesChartView::resizeEvent(QResizeEvent* event)
{
    QChartView::resizeEvent(event);
    fitTicks();
}

void TimeSeriesChartView::setTitle(QChart* chart, const QString& title, const QString& tip)
{
    chart->setTitle(title);
    setToolTip(title + QStringLiteral(": ") + tip); // the title too: a narrow chart may cut it
}

QColor TimeSeriesChartView::curveColor(int index)
{
    return runColor(index);
}

QString TimeSeriesChartView::hiddenNote() const
{
    return m_hidden > 0 ? tr(" — %n run(s) without wall time hidden", nullptr, m_hidden) : QString();
}

QString TimeSeriesChartView::axisTitle() const
{
    return m_axis == TimeAxis::Virtual ? tr("virtual time (s)") : tr("wall time (s)");
}

LossChartView::LossChartView(QWidget* parent)
    : TimeSeriesChartView(parent)
{
    setCurves({});
}

void LossChartView::draw()
{
    QChart* chart = beginChart(tr("Loss"));
    m_targetTimes.assign(m_curves.size(), std::nullopt);
    Range range;
    for (std::size_t c = 0; c < m_curves.size(); ++c) {
        const LossCurve& curve = m_curves[c];
        if (curve.samples.empty()) {
            continue;
        }
        if (timeAxis() == TimeAxis::Wall && !hasWallTime(curve.samples)) {
            markHidden();
            continue;
        }
        std::vector<QPointF> train;
        std::vector<QPointF> val;
        for (const auto& s : curve.samples) {
            const double t = *sampleTime(s, timeAxis());
            train.emplace_back(t, s.trainLoss);
            range.add(t, s.trainLoss);
            if (s.valLoss) {
                val.emplace_back(t, *s.valLoss);
                range.add(t, *s.valLoss);
            }
        }
        const QColor color = curveColor(static_cast<int>(c));
        addLine(chart, curve.label, train, color);
        if (!val.empty()) {
            QLineSeries* valLine = addLine(chart, curve.label + tr(" (val)"), val, color);
            valLine->setPen(QPen(color, 1.5, Qt::DashLine));
            valLine->setPointsVisible(true);
            hideFromLegend(chart, valLine);
        }
        markDrawn();
        const std::optional<double> reached = timeToTarget(curve.samples, m_targetLoss, timeAxis());
        m_targetTimes[c] = reached;
        if (reached) {
            auto* marker = new QScatterSeries(chart);
            marker->setName(tr("%1 reached target at %2 s").arg(curve.label, QString::number(*reached, 'f', 2)));
            marker->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
            marker->setMarkerSize(9);
            marker->setColor(color);
            marker->append(*reached, m_targetLoss);
            marker->setPointLabelsFormat(QString::number(*reached, 'f', 2) + QStringLiteral(" s"));
            marker->setPointLabelsVisible(true);
            marker->setPointLabelsColor(color.darker(150));
            chart->addSeries(marker);
            hideFromLegend(chart, marker);
        }
    }
    if (!hasData()) {
        setTitle(chart, hidesRuns() ? tr("Loss: no wall times") : tr("Loss: no metrics"),
            hidesRuns() ? tr("No run has wall times (simulated runs have virtual time only)")
                        : tr("No metrics: simulated runs have no loss"));
        return;
    }
    if (m_targetLoss > 0) {
        range.add(0, m_targetLoss);
        auto* target = addLine(
            chart, tr("target %1").arg(m_targetLoss), {{0, m_targetLoss}, {range.xMax, m_targetLoss}}, Qt::darkGray);
        target->setPen(QPen(Qt::darkGray, 1.5, Qt::DotLine));
    }
    setTitle(chart, hidesRuns() ? tr("Loss (some runs hidden)") : tr("Loss"),
        tr("Training loss (solid) and validation loss (dashed) per run") + hiddenNote());
    finishChart(chart, range.xMax, range.yMin, range.yMax, tr("loss"));
}

DriftChartView::DriftChartView(QWidget* parent)
    : TimeSeriesChartView(parent)
{
    setCurves({});
}

void DriftChartView::draw()
{
    QChart* chart = beginChart(tr("Drift ‖θ_B − θ_F‖/‖θ_F‖"));
    Range range;
    for (std::size_t c = 0; c < m_curves.size(); ++c) {
        const LossCurve& curve = m_curves[c];
        std::vector<QPointF> mean;
        std::vector<QPointF> max;
        for (const auto& s : curve.samples) {
            const auto t = sampleTime(s, timeAxis());
            const auto drift = driftOverStages(s);
            if (!t || !drift) {
                continue;
            }
            mean.emplace_back(*t, drift->first);
            max.emplace_back(*t, drift->second);
            range.add(*t, drift->first);
            range.add(*t, drift->second);
        }
        if (mean.empty()) {
            if (!curve.samples.empty() && timeAxis() == TimeAxis::Wall && !hasWallTime(curve.samples)) {
                markHidden();
            }
            continue;
        }
        const QColor color = curveColor(static_cast<int>(c));
        addLine(chart, curve.label, mean, color);
        QLineSeries* maxLine = addLine(chart, curve.label + tr(" max"), max, color);
        maxLine->setPen(QPen(color, 1.5, Qt::DashLine));
        hideFromLegend(chart, maxLine);
        markDrawn();
    }
    if (!hasData()) {
        setTitle(
            chart, tr("Drift: no samples"), tr("No drift samples: simulated runs and synchronous schedules have none"));
        return;
    }
    setTitle(chart, hidesRuns() ? tr("Drift (some runs hidden)") : tr("Drift ‖θ_B−θ_F‖/‖θ_F‖"),
        tr("Relative weight drift ‖θ_B−θ_F‖/‖θ_F‖: mean over stages (solid), max stage (dashed)") + hiddenNote());
    useScientificY(); // drift is 1e-4 .. 1e-2
    finishChart(chart, range.xMax, 0, range.yMax, tr("drift"));
}

NoiseScaleChartView::NoiseScaleChartView(QWidget* parent)
    : TimeSeriesChartView(parent)
{
    setCurves({});
}

void NoiseScaleChartView::draw()
{
    QChart* chart = beginChart(tr("Noise scale"));
    Range range;
    for (std::size_t c = 0; c < m_curves.size(); ++c) {
        const LossCurve& curve = m_curves[c];
        std::vector<QPointF> points;
        for (const auto& s : curve.samples) {
            const auto t = sampleTime(s, timeAxis());
            const auto noise = noiseScaleOf(s);
            if (t && noise) {
                points.emplace_back(*t, *noise);
                range.add(*t, *noise);
            }
        }
        if (points.empty()) {
            if (!curve.samples.empty() && timeAxis() == TimeAxis::Wall && !hasWallTime(curve.samples)) {
                markHidden();
            }
            continue;
        }
        addLine(chart, curve.label, points, curveColor(static_cast<int>(c)));
        markDrawn();
    }
    if (!hasData()) {
        setTitle(chart, tr("Noise scale: not measured"),
            tr("No noise scale: simulated runs, and runs recorded before it was measured, have none"));
        return;
    }
    setTitle(chart, hidesRuns() ? tr("Noise scale (some runs hidden)") : tr("Noise scale B_simple"),
        tr("Gradient noise scale B_simple = tr(Σ)/|G|² in samples: past it, a larger batch per update buys "
           "less progress per sample")
            + hiddenNote());
    finishChart(chart, range.xMax, 0, range.yMax, tr("samples"));
}

ThroughputChartView::ThroughputChartView(QWidget* parent)
    : TimeSeriesChartView(parent)
{
    setCurves({});
}

void ThroughputChartView::draw()
{
    QChart* chart = beginChart(tr("Throughput"));
    Range range;
    for (std::size_t c = 0; c < m_curves.size(); ++c) {
        const LossCurve& curve = m_curves[c];
        std::vector<QPointF> points;
        for (const auto& s : curve.samples) {
            const auto t = sampleTime(s, timeAxis());
            const double rate = timeAxis() == TimeAxis::Virtual ? s.tokensPerSVirtual : s.tokensPerSWall;
            if (t && rate > 0) {
                points.emplace_back(*t, rate);
                range.add(*t, rate);
            }
        }
        if (points.empty()) {
            if (!curve.samples.empty() && timeAxis() == TimeAxis::Wall && !hasWallTime(curve.samples)) {
                markHidden();
            }
            continue;
        }
        addLine(chart, curve.label, points, curveColor(static_cast<int>(c)));
        markDrawn();
    }
    if (!hasData()) {
        setTitle(chart, tr("Throughput: no metrics"), tr("No metrics: simulated runs' throughput is in the table"));
        return;
    }
    setTitle(chart, hidesRuns() ? tr("Throughput (some runs hidden)") : tr("Throughput"),
        tr("Tokens per second so far, per run") + hiddenNote());
    finishChart(chart, range.xMax, 0, range.yMax, tr("tokens/s"));
}

} // namespace bs::ui
