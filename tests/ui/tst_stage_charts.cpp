// Stage charts show the report's numbers, and a new report of the same shape updates the bars in
// place instead of rebuilding the chart.
#include "ui/charts/stage_charts.h"

#include <QAbstractBarSeries>
#include <QBarSet>
#include <QLineSeries>
#include <QTest>

using namespace bs::ui;

namespace {

StageChartData makeData(bs::profiler::TimeNs warmUp, std::int64_t activations)
{
    StageChartData d;
    d.title = QStringLiteral("PACI");
    d.report.makespan = 1000;
    d.report.perStage.resize(2);
    for (int s = 0; s < 2; ++s) {
        auto& st = d.report.perStage[static_cast<std::size_t>(s)];
        st.idleByCause[static_cast<std::size_t>(bs::profiler::BubbleCause::WarmUp)] = warmUp * (s + 1);
        st.idleByCause[static_cast<std::size_t>(bs::profiler::BubbleCause::Drain)] = 50;
        st.peakMemoryBytes = (4LL << 20) + activations;
        st.peakWeightVersions = 1;
        st.versionLagHistogram = {{0, 3}, {1, 1}};
    }
    d.staticBytes = {4LL << 20, 4LL << 20};
    d.paramBytes = {1LL << 20, 1LL << 20};
    d.lagBound = {1, 0};
    return d;
}

} // namespace

class TestStageCharts : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void bubbleBarsArePercentOfMakespan()
    {
        BubbleChartView view;
        view.setData(makeData(100, 0));
        QCOMPARE(view.stagePercent(0), 15.0); // (100 + 50) / 1000
        QCOMPARE(view.stagePercent(1), 25.0); // (200 + 50) / 1000
        const int rebuilds = view.rebuilds();
        view.setData(makeData(200, 0)); // same causes and stages: in place
        QCOMPARE(view.rebuilds(), rebuilds);
        QCOMPARE(view.stagePercent(1), 45.0);
    }

    void memoryStacksAndBudgetLine()
    {
        MemoryChartView view;
        auto d = makeData(0, 2LL << 20);
        d.memoryBudgetBytes = 8LL << 20;
        view.setData(d);
        QCOMPARE(view.stageMiB(0), 6.0);
        auto* line = qobject_cast<QLineSeries*>(view.chart()->series().last());
        QVERIFY(line);
        QCOMPARE(line->at(0).y(), 8.0);
        const int rebuilds = view.rebuilds();
        d.memoryBudgetBytes = 16LL << 20;
        view.setData(d);
        QCOMPARE(view.rebuilds(), rebuilds);
        QCOMPARE(qobject_cast<QLineSeries*>(view.chart()->series().last())->at(1).y(), 16.0);
        d.memoryBudgetBytes = 0; // the line goes away: structure changed
        view.setData(d);
        QCOMPARE(view.rebuilds(), rebuilds + 1);
        QCOMPARE(view.chart()->series().size(), 1);
    }

    void lagHistogramAndBound()
    {
        LagChartView view;
        view.setData(makeData(0, 0));
        const auto series = view.chart()->series();
        QCOMPARE(series.size(), 2);
        auto* bars = qobject_cast<QAbstractBarSeries*>(series.first());
        QVERIFY(bars);
        QCOMPARE(bars->barSets().size(), 2); // lag 0, lag 1
        QCOMPARE(bars->barSets().at(0)->at(0), 3.0);
        auto* bound = qobject_cast<QLineSeries*>(series.last());
        QCOMPARE(bound->at(0).y(), 1.0);
        QCOMPARE(bound->at(1).y(), 0.0);
    }
};

QTEST_MAIN(TestStageCharts)
#include "tst_stage_charts.moc"
