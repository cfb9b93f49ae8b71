// Render test (pixel colours), tooltip, wheel zoom and drag pan of the timeline widget.
#include "ui/common/palette.h"
#include "ui/timeline/timeline_view.h"
#include "ui/timeline/timeline_zoom.h"

#include <QImage>
#include <QTest>
#include <QWheelEvent>

#include "trace_fixtures.h"

using namespace bs::ui;

class TestTimelineView : public QObject
{
    Q_OBJECT
private:
    static constexpr int kEventWidth = 700; // 1 ns per pixel for the 700 ns fixture

    static std::unique_ptr<TimelineView> makeView()
    {
        auto view = std::make_unique<TimelineView>();
        view->resize(TimelineView::kGutterPx + kEventWidth + TimelineView::kRightPadPx, 160);
        view->setIndex(test::analysedIndex(test::twoStageTrace()));
        return view;
    }
    static QColor pixel(TimelineView& view, int timeNs, std::size_t row)
    {
        QImage image(view.size(), QImage::Format_RGB32);
        view.render(&image);
        const QRect r = view.rowRect(row);
        return image.pixelColor(TimelineView::kGutterPx + timeNs, r.top() + 1);
    }

private Q_SLOTS:
    void rendersActionsAndBubblesInTheirColours()
    {
        auto view = makeView();
        QVERIFY(view->rowRect(0).height() > 0);
        QCOMPARE(pixel(*view, 20, 0), roleColor(ColorRole::Forward)); // stage 0 F0
        QCOMPARE(pixel(*view, 420, 0), roleColor(ColorRole::Backward)); // stage 0 B0
        QCOMPARE(pixel(*view, 300, 0), roleColor(ColorRole::BubbleDrain)); // stage 0 waits after its last F
        QCOMPARE(pixel(*view, 50, 1), roleColor(ColorRole::BubbleWarmUp)); // stage 1 warm-up
        QCOMPARE(pixel(*view, 520, 1), roleColor(ColorRole::Update)); // stage 1 U0
        QCOMPARE(pixel(*view, 650, 1), roleColor(ColorRole::BubbleDrain)); // stage 1 drain
        QCOMPARE(view->lastDrawList().blocks.size(), std::size_t(9));
    }

    void tooltipNamesTheAction()
    {
        auto view = makeView();
        const QRect r = view->rowRect(0);
        const QString text = view->tooltipTextAt(QPoint(TimelineView::kGutterPx + 650, r.center().y()));
        QVERIFY2(text.contains(QStringLiteral("0B1")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("stage 0, backward, micro-batch 1")), qPrintable(text)); // spelled out
        QVERIFY(text.contains(QStringLiteral("micro-batch 1")));
        QVERIFY(text.contains(QStringLiteral("lag 1")));
        QVERIFY(text.contains(QStringLiteral("100 ns"))); // duration
        const QString bubble = view->tooltipTextAt(QPoint(TimelineView::kGutterPx + 300, r.center().y()));
        QVERIFY2(bubble.contains(QStringLiteral("drain")), qPrintable(bubble));
        QCOMPARE(view->tooltipTextAt(QPoint(5, r.center().y())), QStringLiteral("stage 0")); // gutter: the lane
    }

    void wheelZoomsAroundCursor()
    {
        auto view = makeView();
        TimelineZoom* zoom = view->zoom();
        const double anchor = 350;
        const double before = zoom->coordinatesFor(view->eventAreaWidth()).toTime(anchor);
        const QPointF pos(TimelineView::kGutterPx + anchor, 40);
        QWheelEvent wheel(pos, view->mapToGlobal(pos), QPoint(), QPoint(0, 462), Qt::NoButton, Qt::NoModifier,
            Qt::NoScrollPhase, false);
        QApplication::sendEvent(view.get(), &wheel);
        const TimelineCoordinates after = zoom->coordinatesFor(view->eventAreaWidth());
        QVERIFY(after.span() < 700.0 / 1.9); // 1.0015^462 ≈ 2
        QVERIFY(qAbs(after.toTime(anchor) - before) < 1e-6);
    }

    void dragPansAndSharedZoomFollows()
    {
        auto view = makeView();
        auto other = makeView();
        TimelineZoom shared;
        view->setZoom(&shared);
        other->setZoom(&shared);
        shared.setView(100, 200); // 100 ns over 700 px
        const int y = view->rowRect(0).center().y();
        QTest::mousePress(view.get(), Qt::LeftButton, {}, QPoint(400, y));
        QTest::mouseMove(view.get(), QPoint(330, y)); // drag left by 70 px = 10 ns later
        QTest::mouseRelease(view.get(), Qt::LeftButton, {}, QPoint(330, y));
        QVERIFY(qAbs(shared.coordinates().viewStart() - 110.0) < 1e-6);
        QCOMPARE(other->zoom(), &shared);
        QVERIFY(qAbs(other->zoom()->coordinatesFor(other->eventAreaWidth()).viewEnd() - 210.0) < 1e-6);
    }

    void keyboardZoomsPansAndFits()
    {
        auto view = makeView();
        TimelineZoom* zoom = view->zoom();
        const auto span = [&] { return zoom->coordinatesFor(view->eventAreaWidth()).span(); };
        const auto start = [&] { return zoom->coordinatesFor(view->eventAreaWidth()).viewStart(); };
        const double full = span();
        QTest::keyClick(view.get(), Qt::Key_W);
        QVERIFY(span() < full * 0.9);
        QTest::keyClick(view.get(), Qt::Key_Up);
        const double zoomed = span();
        QVERIFY(zoomed < full * 0.7);
        const double before = start();
        QTest::keyClick(view.get(), Qt::Key_D); // later in time
        QVERIFY2(start() > before, qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(start())));
        QTest::keyClick(view.get(), Qt::Key_Left);
        QTest::keyClick(view.get(), Qt::Key_A);
        QVERIFY(start() < before + 1e-9);
        QTest::keyClick(view.get(), Qt::Key_S);
        QVERIFY(span() > zoomed);
        QTest::keyClick(view.get(), Qt::Key_F);
        QCOMPARE(span(), full);
        QTest::keyClick(view.get(), Qt::Key_W);
        QTest::keyClick(view.get(), Qt::Key_Home);
        QCOMPARE(span(), full);
    }

    void emptyViewPaints()
    {
        TimelineView view;
        view.resize(300, 100);
        QImage image(view.size(), QImage::Format_RGB32);
        view.render(&image);
        QCOMPARE(image.pixelColor(TimelineView::kGutterPx + 5, 60), palette::background());
    }
};

QTEST_MAIN(TestTimelineView)
#include "tst_timeline_view.moc"
