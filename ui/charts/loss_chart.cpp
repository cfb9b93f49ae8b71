#include "ui/charts/loss_chart.h"

#include "ui/charts/stage_charts.h"

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

/// A line series named `name` with `points`, added to `chart`; the chart's theme colours it.
QLineSeries* addLine(QChart* chart, const QString& name, const std::vector<QPointF>& points)
{
    auto* line = new QLineSeries(chart);
    line->setName(name);
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
    plot.x->setRange(0, std::max(1e-9, xMax));
    plot.y->setTitleText(yTitle);
    const double pad = 0.05 * std::max(yMax - yMin, 1e-9);
    plot.y->setRange(yMin >= 0 ? std::max(0.0, yMin - pad) : yMin - pad, yMax + pad);
    chart->addAxis(plot.x, Qt::AlignBottom);
    chart->addAxis(plot.y, Qt::AlignLeft);
    for (QAbstractSeries* series : chart->series()) {
        series->attachAxis(plot.x);
        series->attachAxis(plot.y);
    }
    return plot;
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
        QLineSeries* line = addLine(chart, curve.label, train);
        const QColor color = line->color();
        if (!val.empty()) {
            QLineSeries* valLine = addLine(chart, curve.label + tr(" (val)"), val);
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
        chart->setTitle(hidesRuns() ? tr("Loss — no run has wall times (simulated runs have virtual time only)")
                                    : tr("Loss — no metrics (simulated runs have no loss)"));
        return;
    }
    if (m_targetLoss > 0) {
        range.add(0, m_targetLoss);
        auto* target = addLine(chart, tr("target %1").arg(m_targetLoss), {{0, m_targetLoss}, {range.xMax, m_targetLoss}});
        target->setPen(QPen(Qt::darkGray, 1.5, Qt::DotLine));
    }
    chart->setTitle(tr("Loss (dashed: validation)") + hiddenNote());
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
    for (const LossCurve& curve : m_curves) {
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
        QLineSeries* line = addLine(chart, curve.label, mean);
        QLineSeries* maxLine = addLine(chart, curve.label + tr(" max"), max);
        maxLine->setPen(QPen(line->color(), 1.5, Qt::DashLine));
        hideFromLegend(chart, maxLine);
        markDrawn();
    }
    if (!hasData()) {
        chart->setTitle(tr("Drift — no drift samples (simulated runs and synchronous schedules have none)"));
        return;
    }
    chart->setTitle(tr("Drift ‖θ_B−θ_F‖/‖θ_F‖ (dashed: max stage)") + hiddenNote());
    const Plot plot = finishChart(chart, range.xMax, 0, range.yMax, tr("drift"));
    plot.y->setLabelFormat(QStringLiteral("%.1e"));
}

NoiseScaleChartView::NoiseScaleChartView(QWidget* parent)
    : TimeSeriesChartView(parent)
{
    setCurves({});
}

void NoiseScaleChartView::draw()
{
    QChart* chart = beginChart(tr("Noise scale B_simple"));
    Range range;
    for (const LossCurve& curve : m_curves) {
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
        addLine(chart, curve.label, points);
        markDrawn();
    }
    if (!hasData()) {
        chart->setTitle(tr("Noise scale — not measured (simulated runs, and runs recorded before it was)"));
        return;
    }
    chart->setTitle(tr("Noise scale B_simple = tr(Σ)/|G|² (samples)") + hiddenNote());
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
    for (const LossCurve& curve : m_curves) {
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
        addLine(chart, curve.label, points);
        markDrawn();
    }
    if (!hasData()) {
        chart->setTitle(tr("Throughput — no metrics (simulated runs: see the table)"));
        return;
    }
    chart->setTitle(tr("Throughput (tokens/s so far)") + hiddenNote());
    const Plot plot = finishChart(chart, range.xMax, 0, range.yMax, tr("tokens/s"));
    plot.y->setLabelFormat(QStringLiteral("%.0f"));
}

} // namespace bs::ui
