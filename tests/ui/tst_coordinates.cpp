// Time <-> pixel mapping under zoom and pan (after qt-creator's tst_timelinecoordinates).
#include "ui/timeline/coordinates.h"

#include <QTest>

using bs::ui::TimelineCoordinates;

class TestCoordinates : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void fullViewMapsEnds()
    {
        TimelineCoordinates c(1000, 11000, 500);
        QCOMPARE(c.toPx(1000), 0.0);
        QCOMPARE(c.toPx(11000), 500.0);
        QCOMPARE(c.toTime(250), 6000.0);
        QCOMPARE(c.nsPerPx(), 20.0);
        QVERIFY(c.isFullyZoomedOut());
    }

    void roundTrip_data()
    {
        QTest::addColumn<double>("factor");
        QTest::addColumn<double>("anchorPx");
        QTest::addColumn<double>("panPx");
        QTest::newRow("no zoom") << 1.0 << 0.0 << 0.0;
        QTest::newRow("zoom 2x at left") << 2.0 << 0.0 << 0.0;
        QTest::newRow("zoom 8x at centre, pan left") << 8.0 << 400.0 << -120.0;
        QTest::newRow("zoom 1000x at right, pan right") << 1000.0 << 799.0 << 37.5;
    }
    void roundTrip()
    {
        QFETCH(double, factor);
        QFETCH(double, anchorPx);
        QFETCH(double, panPx);
        TimelineCoordinates c(0, 8'000'000, 800);
        c.zoomAround(anchorPx, factor);
        c.panByPx(panPx);
        for (double px : {0.0, 1.0, 123.25, 400.0, 799.0}) {
            QVERIFY(qAbs(c.toPx(c.toTime(px)) - px) < 1e-6);
        }
        for (double t = c.viewStart(); t <= c.viewEnd(); t += c.span() / 7) {
            QVERIFY(qAbs(c.toTime(c.toPx(t)) - t) < 1e-3);
        }
    }

    void zoomKeepsTimeUnderCursor_data()
    {
        QTest::addColumn<double>("anchorPx");
        QTest::addColumn<double>("factor");
        QTest::newRow("centre in") << 400.0 << 4.0;
        QTest::newRow("quarter in") << 200.0 << 2.5;
        QTest::newRow("near right in") << 700.0 << 10.0;
    }
    void zoomKeepsTimeUnderCursor()
    {
        QFETCH(double, anchorPx);
        QFETCH(double, factor);
        TimelineCoordinates c(0, 800'000, 800);
        const double before = c.toTime(anchorPx);
        c.zoomAround(anchorPx, factor);
        QVERIFY(qAbs(c.toTime(anchorPx) - before) < 1e-6);
        QVERIFY(qAbs(c.span() - 800'000 / factor) < 1e-6);
        QVERIFY(!c.isFullyZoomedOut());
    }

    void zoomOutAndPanAreClamped()
    {
        TimelineCoordinates c(0, 1000, 100);
        c.zoomAround(50, 0.1); // cannot zoom out beyond the trace
        QCOMPARE(c.viewStart(), 0.0);
        QCOMPARE(c.viewEnd(), 1000.0);
        c.zoomAround(100, 4.0); // right quarter: [750, 1000]
        QCOMPARE(c.viewStart(), 750.0);
        c.panByPx(-1000); // drag far left -> later times, clamped at the end
        QCOMPARE(c.viewEnd(), 1000.0);
        c.panByPx(1000); // drag far right -> clamped at the start
        QCOMPARE(c.viewStart(), 0.0);
        QCOMPARE(c.span(), 250.0);
    }

    void minimumSpan()
    {
        TimelineCoordinates c(0, 1'000'000, 1000);
        c.zoomAround(500, 1e9);
        QCOMPARE(c.span(), TimelineCoordinates::kMinSpanNs);
    }

    void growingTraceStaysFitted()
    {
        TimelineCoordinates c(0, 1000, 100);
        c.setTraceRange(0, 5000);
        QVERIFY(c.isFullyZoomedOut());
        QCOMPARE(c.viewEnd(), 5000.0);
        c.zoomAround(0, 5.0); // [0, 1000]
        c.setTraceRange(0, 9000);
        QCOMPARE(c.viewStart(), 0.0);
        QCOMPARE(c.viewEnd(), 1000.0); // a zoomed-in view is left where it is
    }

    void emptyTraceIsFinite()
    {
        TimelineCoordinates c(5, 5, 100);
        QVERIFY(c.span() > 0);
        QVERIFY(qIsFinite(c.toPx(5)));
    }
};

QTEST_GUILESS_MAIN(TestCoordinates)
#include "tst_coordinates.moc"
