// Live traces are indexed off the UI thread: builds arrive as signals, a burst of requests
// collapses to the newest snapshot, and what arrives equals a synchronous build.
#include "ui/timeline/async_index_builder.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include "trace_fixtures.h"

using namespace bs::ui;

class TestAsyncIndexBuilder : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void deliversWhatASynchronousBuildGives()
    {
        AsyncIndexBuilder builder;
        QSignalSpy spy(&builder, &AsyncIndexBuilder::built);
        const auto trace = test::twoStageTrace();
        builder.request(trace, bs::profiler::AnalysisOptions(test::flushRule(false, 1)));
        QVERIFY(spy.wait(10'000));
        const auto built = spy.at(0).at(0).value<BuiltTimeline>();
        const auto expected = test::analysedIndex(trace, test::flushRule(false, 1));
        QVERIFY(built.index != nullptr);
        QCOMPARE(built.index->eventCount(), expected->eventCount());
        QCOMPARE(built.index->bubbleSpans().size(), expected->bubbleSpans().size());
        QCOMPARE(built.index->endTime(), expected->endTime());
    }

    void aBurstOfRequestsCollapsesToTheNewest()
    {
        AsyncIndexBuilder builder;
        QSignalSpy spy(&builder, &AsyncIndexBuilder::built);
        const auto big = test::syntheticTrace(300'000, 8); // keeps the first build busy a while
        const auto newest = test::twoStageTrace();
        builder.request(big, bs::profiler::AnalysisOptions(test::flushRule(false, 1)));
        QVERIFY(builder.isBusy());
        for (int i = 0; i < 20; ++i) {
            builder.request(big, bs::profiler::AnalysisOptions(test::flushRule(false, 1))); // superseded while the first build runs
        }
        builder.request(newest, bs::profiler::AnalysisOptions(test::flushRule(false, 1)));
        QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 2, 30'000);
        QCOMPARE(builder.buildsStarted(), 2); // the first, then only the newest of 21 queued
        const auto last = spy.at(1).at(0).value<BuiltTimeline>();
        QCOMPARE(last.index->snapshot(), newest.get());
        QTest::qWait(50);
        QCOMPARE(spy.count(), 2);
    }

    void cancelledRequestIsNotBuilt()
    {
        AsyncIndexBuilder builder;
        QSignalSpy spy(&builder, &AsyncIndexBuilder::built);
        builder.request(test::syntheticTrace(300'000, 8), bs::profiler::AnalysisOptions(test::flushRule(false, 1)));
        builder.request(test::twoStageTrace(), bs::profiler::AnalysisOptions(test::flushRule(false, 1)));
        builder.cancelPending();
        QVERIFY(spy.wait(30'000));
        QTest::qWait(50);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(builder.buildsStarted(), 1);
    }
};

QTEST_MAIN(TestAsyncIndexBuilder)
#include "tst_async_index_builder.moc"
