// Arrows between matched sends and receives (issue #17 item 2): which ones a window shows, and
// that the view draws them between the two rows.
#include "ui/common/palette.h"
#include "ui/timeline/timeline_view.h"
#include "ui/timeline/timeline_zoom.h"
#include "ui/timeline/transfer_arrows.h"

#include <QImage>
#include <QTest>

#include "trace_fixtures.h"

using namespace bs;
using namespace bs::ui;
using profiler::EventKind;
using profiler::Lane;

namespace {

/// Stage 0 forwards micro-batch 0, sends it [100, 150) to stage 1, which forwards and sends the
/// gradient back [250, 300); stage 0's backward follows.
std::shared_ptr<const TimelineIndex> handOffIndex()
{
    std::vector<profiler::TraceEvent> events{
        test::traceEvent(0, EventKind::Forward, 0, 0, 100),
        test::sendEvent(0, 1, 0, 100, 150),
        test::traceEvent(1, EventKind::Forward, 0, 150, 250),
        test::sendEvent(1, 0, 0, 250, 300),
        test::traceEvent(0, EventKind::Backward, 0, 300, 400),
    };
    profiler::TraceMeta meta;
    meta.stages = 2;
    return TimelineIndex::build(profiler::makeSnapshot(meta, events));
}

std::uint32_t rowOf(const TimelineIndex& index, int stage, Lane lane)
{
    const auto& rows = index.rows();
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (rows[r].stage == stage && rows[r].lane == lane) {
            return static_cast<std::uint32_t>(r);
        }
    }
    return UINT32_MAX;
}

} // namespace

class TestTransferArrows : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void eachSendPointsAtItsReceiversRowAtItsArrival()
    {
        auto index = handOffIndex();
        const TimelineCoordinates coords(0, 400, 400.0); // 1 ns a pixel
        const auto arrows = transferArrows(*index, coords);
        QCOMPARE(arrows.size(), std::size_t(2));
        QCOMPARE(arrows[0].fromRow, rowOf(*index, 0, Lane::Comm));
        QCOMPARE(arrows[0].toRow, rowOf(*index, 1, Lane::Compute));
        QCOMPARE(arrows[0].fromPx, 100.0);
        QCOMPARE(arrows[0].toPx, 150.0);
        QCOMPARE(arrows[1].fromRow, rowOf(*index, 1, Lane::Comm));
        QCOMPARE(arrows[1].toRow, rowOf(*index, 0, Lane::Compute));
        QCOMPARE(arrows[1].fromPx, 250.0);
        QCOMPARE(arrows[1].toPx, 300.0);
    }

    void onlyWhatTheWindowMeetsAndNoneWhenTooDense()
    {
        auto index = handOffIndex();
        TimelineCoordinates early(0, 400, 400.0);
        early.setView(0, 200); // meets the first send only
        QCOMPARE(transferArrows(*index, early).size(), std::size_t(1));
        QCOMPARE(transferArrows(*index, early, 1).size(), std::size_t(1));
        const TimelineCoordinates all(0, 400, 400.0);
        QVERIFY(transferArrows(*index, all, 1).empty()); // two visible, one allowed: none drawn
    }

    void aSendToALaneWithoutComputeRowHasNoArrow()
    {
        std::vector<profiler::TraceEvent> events{
            test::traceEvent(0, EventKind::Forward, 0, 0, 100),
            test::sendEvent(0, 7, 0, 100, 150), // lane 7 does not exist
        };
        profiler::TraceMeta meta;
        meta.stages = 1;
        auto index = TimelineIndex::build(profiler::makeSnapshot(meta, events));
        QVERIFY(transferArrows(*index, TimelineCoordinates(0, 150, 150.0)).empty());
    }

    void theViewDrawsTheArrowBetweenTheRows()
    {
        TimelineView view;
        view.resize(TimelineView::kGutterPx + 400 + TimelineView::kRightPadPx, 200);
        view.setIndex(handOffIndex());
        QImage image(view.size(), QImage::Format_RGB32);
        view.render(&image);
        // The first arrow runs from (100, middle of stage 0's comm row) to (150, top of stage 1's
        // compute row); look where it crosses the gap between the two stages (background only).
        const QRect from = view.rowRect(rowOf(*handOffIndex(), 0, Lane::Comm));
        const QRect to = view.rowRect(rowOf(*handOffIndex(), 1, Lane::Compute));
        const double y0 = from.center().y() + 0.5;
        const double y1 = to.top();
        const int yMid = (from.top() + from.height() + to.top()) / 2;
        QVERIFY(yMid > from.bottom() && yMid < to.top());
        const int xMid = TimelineView::kGutterPx + static_cast<int>(100 + 50 * ((yMid - y0) / (y1 - y0)));
        bool inked = false;
        for (int dx = -1; dx <= 1; ++dx) {
            inked = inked || image.pixelColor(xMid + dx, yMid) != palette::background();
        }
        QVERIFY2(inked, "no arrow drawn between the sender's and the receiver's rows");
        // Far from any arrow the background is untouched.
        QCOMPARE(image.pixelColor(TimelineView::kGutterPx + 380, yMid), palette::background());
    }
};

QTEST_MAIN(TestTransferArrows)
#include "tst_transfer_arrows.moc"
