// Culling, folding and bubble attribution as pure data.
#include "ui/timeline/draw_list.h"

#include <QTest>

#include "trace_fixtures.h"

using namespace bs::ui;
using bs::profiler::BubbleCause;

namespace {
RowItems rowOf(std::initializer_list<std::pair<bs::TimeNs, bs::TimeNs>> spans)
{
    RowItems items;
    std::uint32_t i = 0;
    for (auto [s, e] : spans) {
        items.push(s, e, ColorRole::Forward, static_cast<std::int32_t>(i), i);
        ++i;
    }
    return items;
}
} // namespace

class TestDrawList : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void wideBlocksAreKeptWithLabels()
    {
        const RowItems items = rowOf({{0, 100}, {100, 200}, {300, 400}});
        std::vector<DrawRect> out;
        const TimelineCoordinates c(0, 400, 400); // 1 ns per px
        const auto [visible, folded] = foldRow(items, 3, c, {}, out);
        QCOMPARE(visible, std::size_t(3));
        QCOMPARE(folded, std::size_t(0));
        QCOMPARE(out.size(), std::size_t(3));
        QCOMPARE(out[2].x, 300.0f);
        QCOMPARE(out[2].w, 100.0f);
        QCOMPARE(out[2].row, 3u);
        QCOMPARE(out[1].label, 1);
    }

    void culledToWindow()
    {
        const RowItems items = rowOf({{0, 100}, {100, 200}, {300, 400}, {500, 600}});
        TimelineCoordinates c(0, 600, 600);
        c.setView(150, 450);
        std::vector<DrawRect> out;
        foldRow(items, 0, c, {}, out);
        QCOMPARE(out.size(), std::size_t(2)); // [100,200) reaches in, [300,400) inside
        QCOMPARE(out[0].item, 1u);
        QCOMPARE(out[0].x, -100.0f); // starts left of the view: no clamping, true length kept
        QCOMPARE(out[1].item, 2u);
    }

    void subPixelEventsFold_data()
    {
        QTest::addColumn<int>("events");
        QTest::addColumn<double>("widthPx");
        QTest::addColumn<double>("minPx");
        QTest::newRow("10k into 100 px") << 10000 << 100.0 << 2.0;
        QTest::newRow("1k into 1000 px") << 1000 << 1000.0 << 2.0;
        QTest::newRow("50k into 333 px, 3 px") << 50000 << 333.0 << 3.0;
    }
    void subPixelEventsFold()
    {
        QFETCH(int, events);
        QFETCH(double, widthPx);
        QFETCH(double, minPx);
        RowItems items;
        for (int i = 0; i < events; ++i) {
            items.push(
                i * 10, i * 10 + 9, i % 2 ? ColorRole::Forward : ColorRole::Backward, i, static_cast<std::uint32_t>(i));
        }
        const TimelineCoordinates c(0, events * 10, widthPx);
        std::vector<DrawRect> out;
        const auto [visible, folded] = foldRow(items, 0, c, {minPx}, out);
        QCOMPARE(visible, static_cast<std::size_t>(events)); // nothing lost
        std::size_t covered = 0;
        for (const auto& r : out) {
            covered += r.count;
            QVERIFY(r.w >= 1.0f);
            if (r.folded()) {
                QCOMPARE(r.label, -1); // folded blocks carry no micro-batch label
            }
        }
        QCOMPARE(covered, static_cast<std::size_t>(events));
        // Level of detail: rectangles bounded by pixels, not by events.
        QVERIFY(out.size() <= static_cast<std::size_t>(widthPx / minPx) + 2);
        QVERIFY(folded > 0);
    }

    void foldTakesDominantRole()
    {
        RowItems items;
        items.push(0, 1, ColorRole::Forward, 0, 0);
        items.push(1, 9, ColorRole::Update, 1, 1);
        items.push(9, 10, ColorRole::Forward, 2, 2);
        const TimelineCoordinates c(0, 1000, 10); // 100 ns per px: all three inside one pixel
        std::vector<DrawRect> out;
        foldRow(items, 0, c, {2.0}, out);
        QCOMPARE(out.size(), std::size_t(1));
        QCOMPARE(out[0].count, 3u);
        QVERIFY(out[0].role == ColorRole::Update);
    }

    void emptyRowAndEmptyIndex()
    {
        std::vector<DrawRect> out;
        QCOMPARE(foldRow(RowItems{}, 0, TimelineCoordinates(0, 100, 100), {}, out).first, std::size_t(0));
        QVERIFY(out.empty());
        auto index = TimelineIndex::build(nullptr);
        const DrawList list = buildDrawList(*index, TimelineCoordinates(0, 100, 100));
        QVERIFY(list.blocks.empty());
        QVERIFY(list.bubbles.empty());
    }

    void bubblesAttributedByPosition()
    {
        auto index = test::analysedIndex(test::twoStageTrace());
        QCOMPARE(index->stages(), 2);
        QCOMPARE(index->rows().size(), std::size_t(2));
        QCOMPARE(index->startTime(), bs::TimeNs(0));
        QCOMPARE(index->endTime(), bs::TimeNs(700));
        const auto& spans = index->bubbleSpans();
        QCOMPARE(spans.size(), std::size_t(4));
        // Stage 0: both waits come after its last forward, so they are its drain (the analysis's
        // rule, which the tints share with the charts).
        QCOMPARE(spans[0].stage, 0);
        QCOMPARE(spans[0].start, bs::TimeNs(200));
        QCOMPARE(spans[0].end, bs::TimeNs(400));
        QVERIFY(spans[0].cause == BubbleCause::Drain);
        QVERIFY(spans[1].cause == BubbleCause::Drain);
        // Stage 1: warm-up and drain.
        QVERIFY(spans[2].cause == BubbleCause::WarmUp);
        QCOMPARE(spans[2].end, bs::TimeNs(100));
        QVERIFY(spans[3].cause == BubbleCause::Drain);
        QCOMPARE(spans[3].start, bs::TimeNs(550));
        QCOMPARE(spans[3].end, bs::TimeNs(700));
    }

    void flushAttributedInSynchronousTraces()
    {
        // One stage, m = 2: F0 F1 | gap | F2 : the gap before the next batch's forward is a flush.
        std::vector<bs::profiler::TraceEvent> ev(3);
        ev[0] = {0, 10, 0, 0, 0, 0, bs::profiler::EventKind::Forward};
        ev[1] = {10, 20, 0, 1, 0, 0, bs::profiler::EventKind::Forward};
        ev[2] = {50, 60, 0, 2, 0, 0, bs::profiler::EventKind::Forward};
        auto snap = bs::profiler::makeSnapshot({1, "virtual", "", {}}, ev);
        auto sync = test::analysedIndex(snap, test::flushRule(true, 2));
        QVERIFY(sync->bubbleSpans().at(0).cause == BubbleCause::Flush);
        auto async = test::analysedIndex(snap, test::flushRule(false, 2));
        QVERIFY(async->bubbleSpans().at(0).cause == BubbleCause::Dependency);
    }

    void commWaitsAreTintedApartFromDependencyWaits()
    {
        // Stage 1 waits [180, 260) for micro-batch 1, whose activation is in transit [200, 260):
        // the first 20 ns are a dependency wait (stage 0 still computing), the rest comm.
        using bs::profiler::EventKind;
        using bs::profiler::Lane;
        auto at = [](int stage, EventKind kind, int mb, bs::TimeNs s, bs::TimeNs e) {
            bs::profiler::TraceEvent ev;
            ev.stage = static_cast<std::uint16_t>(stage);
            ev.kind = kind;
            ev.microbatch = mb;
            ev.start = s;
            ev.end = e;
            return ev;
        };
        auto send = [&](int mb, bs::TimeNs s, bs::TimeNs e) {
            auto ev = at(0, EventKind::Send, mb, s, e);
            ev.lane = Lane::Comm;
            ev.aux = 1;
            return ev;
        };
        const std::vector<bs::profiler::TraceEvent> events{
            at(0, EventKind::Forward, 0, 0, 100), send(0, 100, 130), at(0, EventKind::Forward, 1, 100, 200),
            send(1, 200, 260), at(1, EventKind::Forward, 0, 130, 180), at(1, EventKind::Forward, 1, 260, 300)};
        auto index = test::analysedIndex(bs::profiler::makeSnapshot({2, "virtual", "", {}}, events), test::flushRule(false, 2));
        std::vector<BubbleSpan> stage1;
        for (const auto& b : index->bubbleSpans()) {
            if (b.stage == 1) {
                stage1.push_back(b);
            }
        }
        QCOMPARE(stage1.size(), std::size_t(3));
        QVERIFY(stage1[0].cause == BubbleCause::WarmUp);
        QVERIFY(stage1[1].cause == BubbleCause::Dependency);
        QCOMPARE(stage1[1].start, bs::TimeNs(180));
        QCOMPARE(stage1[1].end, bs::TimeNs(200));
        QVERIFY(stage1[2].cause == BubbleCause::Comm);
        QCOMPARE(stage1[2].start, bs::TimeNs(200));
        QCOMPARE(stage1[2].end, bs::TimeNs(260));
        // The comm wait is drawn in its own colour.
        const DrawList list = buildDrawList(*index, TimelineCoordinates(0, 300, 300));
        bool commDrawn = false;
        for (const auto& r : list.bubbles) {
            commDrawn = commDrawn || r.role == ColorRole::BubbleComm;
        }
        QVERIFY(commDrawn);
    }

    void versionLagAndHitTest()
    {
        auto index = test::analysedIndex(test::twoStageTrace());
        // Event 8 is stage 0's B1 at version 1; its F1 ran at version 0.
        QCOMPARE(index->versionLag(8).value_or(-99), 1);
        QVERIFY(!index->versionLag(0).has_value()); // a forward has no lag
        const auto hit = index->hitEvent(0, 450, 0);
        QVERIFY(hit.has_value());
        QCOMPARE(index->events(0).source[*hit], 5u); // stage 0's B0 [400,500)
        QVERIFY(!index->hitEvent(0, 300, 10).has_value()); // inside a bubble
        QVERIFY(index->hitBubble(0, 300).has_value());
    }

    void drawListOverWholeTrace()
    {
        auto index = test::analysedIndex(test::twoStageTrace());
        const DrawList list = buildDrawList(*index, TimelineCoordinates(0, 700, 700));
        QCOMPARE(list.blocks.size(), std::size_t(9));
        QCOMPARE(list.bubbles.size(), std::size_t(4));
        QCOMPARE(list.visibleEvents, std::size_t(9));
        QCOMPARE(list.foldedEvents, std::size_t(0));
    }

    void millionEventsFoldToPixels()
    {
        auto index = test::analysedIndex(test::syntheticTrace(1'000'000, 8));
        QCOMPARE(index->eventCount(), std::size_t(1'000'000));
        QCOMPARE(index->rows().size(), std::size_t(16)); // compute + comm per stage
        const TimelineCoordinates c(index->startTime(), index->endTime(), 1200);
        const DrawList list = buildDrawList(*index, c);
        QCOMPARE(list.visibleEvents, std::size_t(1'000'000));
        QVERIFY(list.blocks.size() <= 16 * (1200 / 2 + 2));
    }
};

QTEST_GUILESS_MAIN(TestDrawList)
#include "tst_draw_list.moc"
