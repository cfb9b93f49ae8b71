// Stage charts show the report's numbers, and a new report of the same shape updates the bars in
// place instead of rebuilding the chart.
#include "ui/charts/stage_charts.h"

#include <QAbstractBarSeries>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QLegend>
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

    // Both compared runs at once: at each stage one bar per run (a left, b right), a set
    // one run lacks is 0 for it, and the lag bound follows each run's bars.
    void bothRunsSideBySide()
    {
        BubbleChartView bubbles;
        auto flush = makeData(300, 0);
        flush.title = QStringLiteral("1F1B-flush");
        bubbles.setRuns({makeData(100, 0), flush});
        QCOMPARE(bubbles.stagePercent(0), 15.0); // stage 0, run a
        QCOMPARE(bubbles.stagePercent(1), 35.0); // stage 0, run b: (300 + 50) / 1000
        QCOMPARE(bubbles.stagePercent(2), 25.0); // stage 1, run a
        QCOMPARE(bubbles.stagePercent(3), 65.0); // stage 1, run b
        QVERIFY(bubbles.chart()->title().contains(QStringLiteral("a: PACI")));
        QVERIFY(bubbles.chart()->title().contains(QStringLiteral("b: 1F1B-flush")));
        auto* axis = qobject_cast<QBarCategoryAxis*>(bubbles.chart()->axes(Qt::Horizontal).first());
        QVERIFY(axis);
        QCOMPARE(axis->categories().size(), 4); // one bar per run at each stage, labelled with the stage
        const auto visible = [&](int i) { return QString(axis->categories().at(i)).remove(QChar(0x200B)); };
        QCOMPARE(visible(0), QStringLiteral("0"));
        QCOMPARE(visible(1), QString()); // run b's bar: drawn without a label, so stages do not crowd
        QCOMPARE(visible(2), QStringLiteral("1"));
        const QStringList labels = axis->categories();
        QCOMPARE(QSet<QString>(labels.begin(), labels.end()).size(), 4); // a category axis needs distinct labels
        bubbles.setRuns({makeData(100, 0)}); // one run: the plain chart
        QCOMPARE(bubbles.stagePercent(1), 25.0);

        LagChartView lag;
        auto noLag = makeData(0, 0);
        for (auto& st : noLag.report.perStage) {
            st.versionLagHistogram = {{0, 4}}; // only "lag 0": run b has no "lag 1" set
        }
        noLag.lagBound = {0, 0};
        lag.setRuns({makeData(0, 0), noLag});
        auto* bars = qobject_cast<QAbstractBarSeries*>(lag.chart()->series().first());
        QCOMPARE(bars->barSets().size(), 2);
        QCOMPARE(bars->barSets().at(1)->at(1), 0.0); // lag 1 of run b at stage 0
        QCOMPARE(bars->barSets().at(1)->at(0), 1.0); // lag 1 of run a at stage 0
        auto* bound = qobject_cast<QLineSeries*>(lag.chart()->series().last());
        QCOMPARE(bound->count(), 4);
        QCOMPARE(bound->at(0), QPointF(0, 1)); // run a, stage 0
        QCOMPARE(bound->at(1), QPointF(1, 0)); // run b, stage 0
    }

    // On a 1280x800 screen each chart gets ~200 px: Qt Charts elided the legend entries, the run
    // names in the title and every stage number to "…". A narrow chart drops what cannot fit
    // (the legend repeats the toolbar's colour key; the full title stays in the tooltip).
    void narrowChartsDropWhatWouldBeElided()
    {
        BubbleChartView bubbles;
        auto flush = makeData(300, 0);
        flush.title = QStringLiteral("1F1B-flush");
        bubbles.setRuns({makeData(100, 0), flush});
        bubbles.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bubbles));
        const auto resizeTo = [&](int w, int h) {
            bubbles.resize(w, h);
            QTRY_COMPARE(bubbles.width(), w);
        };
        resizeTo(900, 300);
        QVERIFY(bubbles.shownTitle().contains(QStringLiteral("a: PACI")));
        QVERIFY(bubbles.chart()->legend()->isVisible());
        resizeTo(150, 230); // two legend entries (warm-up, drain) need 180 px
        QCOMPARE(bubbles.shownTitle(), QStringLiteral("Bubbles by cause"));
        QVERIFY(bubbles.toolTip().contains(QStringLiteral("b: 1F1B-flush")));
        QVERIFY(!bubbles.chart()->legend()->isVisible());
        for (QAbstractAxis* axis : bubbles.chart()->axes()) {
            QVERIFY(!axis->truncateLabels());
        }
        resizeTo(900, 300);
        QVERIFY(bubbles.shownTitle().contains(QStringLiteral("b: 1F1B-flush")));
    }

    // Every text the chart draws (title, axis titles, labels) is whole at any width the window
    // gives a chart (the table beside them takes what its columns need): the version-lag chart's
    // two value axes share 40 % of its width in Qt Charts, which elided both axis titles to "…"
    // under ~220 px. Read from the scene's text items, as drawn.
    void noChartTextIsElided_data()
    {
        QTest::addColumn<int>("width");
        for (int w : {150, 170, 190, 210, 240, 300, 450, 900}) {
            QTest::newRow(qPrintable(QString::number(w))) << w;
        }
    }

    void noChartTextIsElided()
    {
        QFETCH(int, width);
        BubbleChartView bubbles;
        MemoryChartView memory;
        LagChartView lag;
        auto flush = makeData(300, 2LL << 20);
        flush.title = QStringLiteral("1F1B-flush");
        bubbles.setRuns({makeData(100, 0), flush});
        memory.setRuns({makeData(100, 0), flush});
        lag.setRuns({makeData(100, 0), flush});
        for (StageBarChartView* view : {static_cast<StageBarChartView*>(&bubbles),
                 static_cast<StageBarChartView*>(&memory), static_cast<StageBarChartView*>(&lag)}) {
            view->resize(width, 230);
            view->show();
            QVERIFY(QTest::qWaitForWindowExposed(view));
            // A top-level window is never narrower than ~160 px here: whatever it got is checked.
            QTRY_VERIFY(view->width() >= width || view->width() >= 160);
            view->grab(); // lay the chart out as painted
            int texts = 0;
            for (QGraphicsItem* item : view->scene()->items()) {
                auto* text = dynamic_cast<QGraphicsTextItem*>(item);
                if (text == nullptr || !text->isVisible()) {
                    continue;
                }
                ++texts;
                const QString shown = text->toPlainText();
                QVERIFY2(!shown.contains(QChar(0x2026)) && !shown.contains(QStringLiteral("...")),
                    qPrintable(view->chart()->title() + QStringLiteral(": '") + shown + QStringLiteral("'")));
            }
            QVERIFY(texts > 0);
        }
    }
};

QTEST_MAIN(TestStageCharts)
#include "tst_stage_charts.moc"
