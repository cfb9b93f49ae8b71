// StageStatsModel: one row per stage with the report's figures; passes QAbstractItemModelTester.
#include "ui/models/stage_stats_model.h"

#include <QAbstractItemModelTester>
#include <QTest>

using namespace bs::ui;

class TestStageStatsModel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void rowsFollowTheReport_data()
    {
        QTest::addColumn<int>("column");
        QTest::addColumn<double>("expected");
        QTest::addColumn<QString>("text");
        QTest::newRow("busy") << int(StageStatsModel::Busy) << 750.0 << QStringLiteral("750 ns");
        QTest::newRow("bubble") << int(StageStatsModel::Bubble) << 0.25 << QStringLiteral("25.0 %");
        QTest::newRow("warm-up") << int(StageStatsModel::WarmUp) << 100.0 << QStringLiteral("100 ns");
        QTest::newRow("flush") << int(StageStatsModel::Flush) << 150.0 << QStringLiteral("150 ns");
        QTest::newRow("memory") << int(StageStatsModel::PeakMemory) << 3.0 * 1024 * 1024 << QStringLiteral("3.00 MiB");
        QTest::newRow("lag") << int(StageStatsModel::MaxLag) << 2.0 << QStringLiteral("2");
    }
    void rowsFollowTheReport()
    {
        QFETCH(int, column);
        QFETCH(double, expected);
        QFETCH(QString, text);
        bs::profiler::Report report;
        report.perStage.resize(3);
        auto& s = report.perStage[1];
        s.stage = 1;
        s.busy = 750;
        s.idle = 250;
        s.bubbleFraction = 0.25;
        s.idleByCause[static_cast<std::size_t>(bs::profiler::BubbleCause::WarmUp)] = 100;
        s.idleByCause[static_cast<std::size_t>(bs::profiler::BubbleCause::Flush)] = 150;
        s.peakMemoryBytes = 3 * 1024 * 1024;
        s.maxVersionLag = 2;
        StageStatsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setReport(report);
        QCOMPARE(model.rowCount(), 3);
        const QModelIndex cell = model.index(1, column);
        QCOMPARE(cell.data(StageStatsModel::RawValueRole).toDouble(), expected);
        QCOMPARE(cell.data().toString(), text);
        QCOMPARE(model.headerData(1, Qt::Vertical).toString(), QStringLiteral("stage 1"));
    }
};

QTEST_MAIN(TestStageStatsModel)
#include "tst_stage_stats_model.moc"
