#include "ui/charts/stage_charts.h"

#include "ui/common/palette.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QLineSeries>
#include <QPercentBarSeries>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace bs::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

QStringList stageCategories(int stages)
{
    QStringList names;
    for (int s = 0; s < stages; ++s) {
        names << QString::number(s);
    }
    return names;
}

/// Resets `view`'s chart to an empty one with the house style.
QChart* freshChart(QChartView* view, const QString& title)
{
    auto* chart = new QChart(); // owned by the view after setChart
    styleChart(chart, title);
    QChart* old = view->chart();
    view->setChart(chart);
    delete old;
    return chart;
}

QBarCategoryAxis* stageAxis(QChart* chart, int stages)
{
    auto* axis = new QBarCategoryAxis(chart);
    axis->append(stageCategories(stages));
    axis->setTitleText(QObject::tr("stage"));
    chart->addAxis(axis, Qt::AlignBottom);
    return axis;
}

QValueAxis* valueAxis(QChart* chart, const QString& title, double max, Qt::Alignment side = Qt::AlignLeft)
{
    auto* axis = new QValueAxis(chart);
    axis->setTitleText(title);
    axis->setRange(0, max);
    axis->setTickCount(5);
    axis->applyNiceNumbers();
    axis->setLabelFormat(QStringLiteral("%.0f"));
    chart->addAxis(axis, side);
    return axis;
}

double niceCeil(double v)
{
    if (v <= 0) {
        return 1.0;
    }
    const double magnitude = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0}) {
        if (m * magnitude >= v * 1.05) {
            return m * magnitude;
        }
    }
    return 10.0 * magnitude;
}

double barTotal(QChartView* view, int stage)
{
    double total = 0;
    const auto series = view->chart()->series();
    for (QAbstractSeries* s : series) {
        if (auto* bars = qobject_cast<QAbstractBarSeries*>(s)) {
            const auto sets = bars->barSets();
            for (QBarSet* set : sets) {
                total += stage < set->count() ? set->at(stage) : 0.0;
            }
        }
    }
    return total;
}

} // namespace

void styleChart(QChart* chart, const QString& title)
{
    chart->setTheme(QChart::ChartThemeLight);
    chart->setTitle(title);
    QFont f = chart->titleFont();
    f.setBold(true);
    f.setPointSizeF(9.5);
    chart->setTitleFont(f);
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignBottom);
    QFont lf = chart->legend()->font();
    lf.setPointSizeF(8);
    chart->legend()->setFont(lf);
    chart->setMargins(QMargins(4, 2, 4, 2));
    chart->setBackgroundRoundness(0);
}

BubbleChartView::BubbleChartView(QWidget* parent)
    : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
    setData({});
}

void BubbleChartView::setData(const StageChartData& input)
{
    QChart* chart = freshChart(this, tr("Bubbles by cause · %1").arg(input.title));
    const int stages = static_cast<int>(input.report.perStage.size());
    auto* series = new QStackedBarSeries(chart);
    const double makespan = static_cast<double>(std::max<profiler::TimeNs>(1, input.report.makespan));
    double maxTotal = 0;
    for (int c = 0; c < profiler::kBubbleCauseCount; ++c) {
        const auto cause = static_cast<profiler::BubbleCause>(c);
        auto* set = new QBarSet(bubbleCauseLabel(cause), series);
        set->setColor(bubbleCauseColor(cause));
        set->setBorderColor(bubbleCauseColor(cause));
        bool any = false;
        for (const auto& stage : input.report.perStage) {
            const double v = 100.0 * static_cast<double>(stage.idleByCause[static_cast<std::size_t>(c)]) / makespan;
            any = any || v > 0;
            *set << v;
        }
        if (any) {
            series->append(set);
        } else {
            delete set;
        }
    }
    for (int s = 0; s < stages; ++s) {
        double total = 0;
        for (QBarSet* set : series->barSets()) {
            total += set->at(s);
        }
        maxTotal = std::max(maxTotal, total);
    }
    series->setBarWidth(0.7);
    chart->addSeries(series);
    series->attachAxis(stageAxis(chart, stages));
    auto* y = valueAxis(chart, tr("% idle"), niceCeil(std::max(1.0, maxTotal)));
    series->attachAxis(y);
}

double BubbleChartView::stagePercent(int stage) const { return barTotal(const_cast<BubbleChartView*>(this), stage); }

MemoryChartView::MemoryChartView(QWidget* parent)
    : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
    setData({});
}

void MemoryChartView::setData(const StageChartData& input)
{
    QChart* chart = freshChart(this, tr("Peak memory · %1").arg(input.title));
    const int stages = static_cast<int>(input.report.perStage.size());
    auto* series = new QStackedBarSeries(chart);
    auto* weights = new QBarSet(tr("weights+opt"), series);
    auto* stash = new QBarSet(tr("stash"), series);
    auto* activations = new QBarSet(tr("activations"), series);
    weights->setColor(QColor(0x64, 0x74, 0x8b));
    stash->setColor(QColor(0xa7, 0x8b, 0xfa));
    activations->setColor(QColor(0x38, 0xbd, 0xf8));
    double maxTotal = 0;
    for (int s = 0; s < stages; ++s) {
        const auto& st = input.report.perStage[static_cast<std::size_t>(s)];
        const auto at = [s](const std::vector<std::int64_t>& v) {
            return static_cast<std::size_t>(s) < v.size() ? static_cast<double>(v[static_cast<std::size_t>(s)]) : 0.0;
        };
        const double total = static_cast<double>(st.peakMemoryBytes);
        const double w = std::min(total, at(input.staticBytes));
        const double k = std::min(total - w, std::max(0, st.peakWeightVersions - 1) * at(input.paramBytes));
        *weights << w / kMiB;
        *stash << k / kMiB;
        *activations << std::max(0.0, total - w - k) / kMiB;
        maxTotal = std::max(maxTotal, total / kMiB);
    }
    series->append(weights);
    series->append(stash);
    series->append(activations);
    series->setBarWidth(0.7);
    chart->addSeries(series);
    auto* x = stageAxis(chart, stages);
    series->attachAxis(x);
    const double budget = static_cast<double>(input.memoryBudgetBytes) / kMiB;
    auto* y = valueAxis(chart, tr("MiB"), niceCeil(std::max({1.0, maxTotal, budget})));
    y->setLabelFormat(maxTotal < 10 ? QStringLiteral("%.1f") : QStringLiteral("%.0f"));
    series->attachAxis(y);
    if (budget > 0) {
        auto* line = new QLineSeries(chart);
        line->setName(tr("budget"));
        line->append(-0.5, budget);
        line->append(stages - 0.5, budget);
        QPen pen(palette::budgetLine());
        pen.setWidthF(2);
        pen.setStyle(Qt::DashLine);
        line->setPen(pen);
        chart->addSeries(line);
        // The category axis maps category i to x = i, so a value axis over [-0.5, n-0.5] aligns.
        auto* lx = new QValueAxis(chart);
        lx->setRange(-0.5, stages - 0.5);
        lx->setVisible(false);
        chart->addAxis(lx, Qt::AlignBottom);
        line->attachAxis(lx);
        line->attachAxis(y);
    }
}

double MemoryChartView::stageMiB(int stage) const { return barTotal(const_cast<MemoryChartView*>(this), stage); }

LagChartView::LagChartView(QWidget* parent)
    : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
    setData({});
}

void LagChartView::setData(const StageChartData& input)
{
    QChart* chart = freshChart(this, tr("Version lag · %1").arg(input.title));
    const int stages = static_cast<int>(input.report.perStage.size());
    int maxLag = 0;
    for (const auto& st : input.report.perStage) {
        for (const auto& [lag, count] : st.versionLagHistogram) {
            if (count > 0) {
                maxLag = std::max(maxLag, lag);
            }
        }
    }
    auto* series = new QPercentBarSeries(chart);
    const QColor lagColors[] = {QColor(0x86, 0xef, 0xac), QColor(0xfb, 0xbf, 0x24), QColor(0xf9, 0x73, 0x16),
                                QColor(0xdc, 0x26, 0x26)};
    for (int lag = 0; lag <= maxLag; ++lag) {
        auto* set = new QBarSet(tr("lag %1").arg(lag), series);
        set->setColor(lagColors[std::min(lag, 3)]);
        for (const auto& st : input.report.perStage) {
            const auto it = st.versionLagHistogram.find(lag);
            *set << (it == st.versionLagHistogram.end() ? 0.0 : static_cast<double>(it->second));
        }
        series->append(set);
    }
    series->setBarWidth(0.7);
    chart->addSeries(series);
    auto* x = stageAxis(chart, stages);
    series->attachAxis(x);
    auto* y = valueAxis(chart, tr("% share"), 100);
    series->attachAxis(y);
    if (!input.lagBound.empty()) {
        int maxBound = 0;
        auto* bound = new QLineSeries(chart);
        bound->setName(tr("bound ⌈(p−s−1)/a⌉"));
        for (int s = 0; s < stages && s < static_cast<int>(input.lagBound.size()); ++s) {
            const int b = input.lagBound[static_cast<std::size_t>(s)];
            maxBound = std::max(maxBound, b);
            bound->append(s, b);
        }
        QPen pen(QColor(0x1f, 0x29, 0x37));
        pen.setWidthF(2);
        bound->setPen(pen);
        bound->setPointsVisible(true);
        chart->addSeries(bound);
        auto* lx = new QValueAxis(chart);
        lx->setRange(-0.5, stages - 0.5);
        lx->setVisible(false);
        chart->addAxis(lx, Qt::AlignBottom);
        auto* ly = new QValueAxis(chart);
        ly->setRange(0, std::max(maxBound, maxLag) + 1);
        ly->setTickCount(std::max(maxBound, maxLag) + 2);
        ly->setLabelFormat(QStringLiteral("%d"));
        ly->setTitleText(tr("updates"));
        chart->addAxis(ly, Qt::AlignRight);
        bound->attachAxis(lx);
        bound->attachAxis(ly);
    }
}

} // namespace bs::ui
