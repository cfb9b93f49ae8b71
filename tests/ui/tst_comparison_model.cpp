// The comparison table shows exactly the reports' figures; the model passes QAbstractItemModelTester.
#include "ui/common/format.h"
#include "ui/models/comparison_model.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QTest>

using namespace bs::ui;
using Metric = ComparisonModel::Metric;

namespace {

bs::profiler::Report makeReport(
    double bubble, bs::profiler::TimeNs makespan, std::vector<std::pair<std::int64_t, int>> stages)
{
    bs::profiler::Report r;
    r.bubbleFraction = bubble;
    r.steadyBubbleFraction = bubble / 2;
    r.steadyBusy = 1; // a steady window was reached (else the row shows none)
    r.makespan = makespan;
    r.stages = static_cast<int>(stages.size());
    int s = 0;
    for (auto [memory, lag] : stages) {
        bs::profiler::StageReport st;
        st.stage = s++;
        st.peakMemoryBytes = memory;
        st.maxVersionLag = lag;
        r.perStage.push_back(st);
    }
    return r;
}

} // namespace

class TestComparisonModel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void valuesEqualTheReports()
    {
        const auto paci = makeReport(0.05, 1'000'000, {{300, 1}, {200, 1}, {100, 0}});
        const auto flush = makeReport(0.30, 1'500'000, {{300, 0}, {250, 0}, {100, 0}});
        ComparisonModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRuns({ComparisonRow::fromReport("paci a=8", paci, 640.0, 1),
            ComparisonRow::fromReport("1f1b a=8", flush, 420.0, -1)});
        QCOMPARE(model.rowCount(), ComparisonModel::kMetricCount);
        QCOMPARE(model.columnCount(), 3); // two runs + difference
        const auto raw = [&](Metric m, int column) {
            return model.index(static_cast<int>(m), column).data(ComparisonModel::RawValueRole).toDouble();
        };
        QCOMPARE(raw(Metric::BubbleFraction, 0), paci.bubbleFraction);
        QCOMPARE(raw(Metric::BubbleFraction, 1), flush.bubbleFraction);
        QCOMPARE(raw(Metric::SteadyBubbleFraction, 1), flush.steadyBubbleFraction);
        QCOMPARE(raw(Metric::Throughput, 0), 640.0);
        QCOMPARE(raw(Metric::Makespan, 1), 1'500'000.0);
        QCOMPARE(raw(Metric::PeakMemory, 0), 300.0); // largest stage
        QCOMPARE(raw(Metric::PeakMemory, 1), 300.0);
        QCOMPARE(raw(Metric::MaxVersionLag, 0), 1.0);
        QCOMPARE(raw(Metric::LagBound, 1), -1.0);
        // Differences: throughput as a ratio, bubble in percentage points.
        QCOMPARE(raw(Metric::Throughput, 2), 640.0 / 420.0);
        QCOMPARE(raw(Metric::BubbleFraction, 2), 0.05 - 0.30);
        QCOMPARE(model.index(static_cast<int>(Metric::Throughput), 2).data().toString(), QStringLiteral("1.52×"));
        QCOMPARE(model.index(static_cast<int>(Metric::BubbleFraction), 0).data().toString(), QStringLiteral("5.0 %"));
        QCOMPARE(
            model.index(static_cast<int>(Metric::BubbleFraction), 2).data().toString(), QStringLiteral("-25.0 pp"));
        QCOMPARE(model.index(static_cast<int>(Metric::LagBound), 1).data().toString(), QStringLiteral("n/a"));
        QCOMPARE(model.headerData(0, Qt::Horizontal).toString(), QStringLiteral("paci a=8"));
        // A "name · measured" label is shown on two lines; the tooltip keeps it whole.
        model.setRuns({ComparisonRow::fromReport("PACI a=8 b=8 · measured", paci, 640.0, 1)});
        QCOMPARE(model.headerData(0, Qt::Horizontal).toString(), QStringLiteral("PACI a=8 b=8\nmeasured"));
        QCOMPARE(
            model.headerData(0, Qt::Horizontal, Qt::ToolTipRole).toString(), QStringLiteral("PACI a=8 b=8 · measured"));
        model.setRuns({ComparisonRow::fromReport("paci a=8", paci, 640.0, 1),
            ComparisonRow::fromReport("1f1b a=8", flush, 420.0, -1)});
        QCOMPARE(model.headerData(2, Qt::Horizontal).toString(), QStringLiteral("difference"));
    }

    void timeToTargetRow()
    {
        const auto report = makeReport(0.1, 1'000'000, {{100, 0}});
        ComparisonRow fast = ComparisonRow::fromReport("paci", report, 1.0, 1);
        ComparisonRow slow = ComparisonRow::fromReport("1f1b", report, 1.0, -1);
        QCOMPARE(fast.timeToTargetS, -1.0); // not known until metrics say so
        fast.timeToTargetS = 1.5;
        slow.timeToTargetS = 6.0;
        ComparisonModel model;
        model.setRuns({fast, slow});
        const int row = static_cast<int>(Metric::TimeToTarget);
        QCOMPARE(model.headerData(row, Qt::Vertical).toString(), QStringLiteral("time to target"));
        QVERIFY(model.headerData(row, Qt::Vertical, Qt::ToolTipRole).toString().contains(QStringLiteral("val. loss")));
        QCOMPARE(model.index(row, 0).data().toString(), QStringLiteral("1.50 s"));
        QCOMPARE(model.index(row, 2).data(ComparisonModel::RawValueRole).toDouble(), 0.25);
        QCOMPARE(model.index(row, 2).data().toString(), QStringLiteral("0.25×"));
        QVERIFY(model.index(row, 2).data(Qt::ForegroundRole).value<QBrush>().color().green() > 100); // first is better
        slow.timeToTargetS = -1; // never reached
        model.setRuns({fast, slow});
        QCOMPARE(model.index(row, 1).data().toString(), QStringLiteral("—"));
        QCOMPARE(model.index(row, 2).data().toString(), QString());
    }

    void singleRunHasNoDifferenceColumn()
    {
        ComparisonModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRuns({ComparisonRow::fromReport("gpipe", makeReport(0.4, 10, {{1, 0}}), 1.0, 0)});
        QCOMPARE(model.columnCount(), 1);
        model.setRuns({});
        QCOMPARE(model.columnCount(), 0);
    }

    // A run of fewer than three batches has no steady window: its steady bubble is "—" and no
    // difference is computed against it (it showed the whole run's bubble under the name steady).
    void noSteadyWindowShowsNone()
    {
        bs::profiler::Report shortRun = makeReport(0.38, 10, {{1, 0}});
        shortRun.steadyBusy = -1;
        ComparisonModel model;
        model.setRuns({ComparisonRow::fromReport("paci", shortRun, 1.0, 1),
            ComparisonRow::fromReport("1f1b", makeReport(0.5, 10, {{1, 0}}), 1.0, 0)});
        const int row = static_cast<int>(ComparisonModel::Metric::SteadyBubbleFraction);
        QCOMPARE(model.index(row, 0).data().toString(), QStringLiteral("—"));
        QCOMPARE(model.index(row, 1).data().toString(), formatPercent(0.25));
        QCOMPARE(model.index(row, 2).data().toString(), QString());
    }
};

QTEST_MAIN(TestComparisonModel)
#include "tst_comparison_model.moc"
