#include "ui/charts/loss_chart.h"

#include "ui/charts/stage_charts.h"

#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>
#include <limits>

namespace bs::ui {

LossChartView::LossChartView(QWidget* parent)
    : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
    setCurves({});
}

void LossChartView::setCurves(const std::vector<LossCurve>& curves, double targetLoss)
{
    auto* chart = new QChart();
    styleChart(chart, tr("Loss"));
    QChart* old = this->chart();
    setChart(chart);
    delete old;
    double tMax = 0;
    double lMin = std::numeric_limits<double>::max();
    double lMax = 0;
    m_hasData = false;
    std::vector<QLineSeries*> lines;
    for (const auto& curve : curves) {
        if (curve.samples.empty()) {
            continue;
        }
        auto* line = new QLineSeries(chart);
        line->setName(curve.label);
        for (const auto& s : curve.samples) {
            line->append(s.timeSeconds, s.loss);
            tMax = std::max(tMax, s.timeSeconds);
            lMin = std::min(lMin, s.loss);
            lMax = std::max(lMax, s.loss);
        }
        chart->addSeries(line);
        lines.push_back(line);
        m_hasData = true;
    }
    if (!m_hasData) {
        chart->setTitle(tr("Loss — no metrics (simulated runs have no loss)"));
        return;
    }
    auto* x = new QValueAxis(chart);
    x->setTitleText(tr("time (s)"));
    x->setRange(0, std::max(1e-9, tMax));
    auto* y = new QValueAxis(chart);
    y->setTitleText(tr("loss"));
    const double lo = std::min(lMin, targetLoss > 0 ? targetLoss : lMin);
    y->setRange(std::max(0.0, lo - 0.05 * (lMax - lo)), lMax + 0.05 * (lMax - lo) + 1e-9);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    for (QLineSeries* line : lines) {
        line->attachAxis(x);
        line->attachAxis(y);
    }
    if (targetLoss > 0) {
        auto* target = new QLineSeries(chart);
        target->setName(tr("target"));
        target->append(0, targetLoss);
        target->append(tMax, targetLoss);
        target->setPen(QPen(Qt::darkGray, 1.5, Qt::DashLine));
        chart->addSeries(target);
        target->attachAxis(x);
        target->attachAxis(y);
    }
}

} // namespace bs::ui
