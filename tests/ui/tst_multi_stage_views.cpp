// Issue 15's views: ranks holding several stages (interleaved-1f1b, zb-v, ...). The timeline has
// one lane per rank with each chunk's actions in their own shade and the chunk and model stage in
// the tooltip; the what-if panel, Suggest and the comparison table take v and the placement from
// the catalogue's traits; memory per rank counts every chunk the rank holds.
#include "runtime/plan/schedule/catalogue.h"
#include "ui/charts/stage_charts.h"
#include "ui/common/palette.h"
#include "ui/compare/compare_view.h"
#include "ui/models/comparison_model.h"
#include "ui/shell/main_window.h"
#include "ui/shell/run_figures.h"
#include "ui/timeline/draw_list.h"
#include "ui/timeline/event_search.h"
#include "ui/timeline/timeline_legend.h"
#include "ui/timeline/timeline_view.h"
#include "ui/timeline/timeline_zoom.h"
#include "ui/tuning/prediction_engine.h"
#include "ui/tuning/tuning_panel.h"
#include "ui/tuning/what_if.h"

#include <QAbstractAxis>
#include <QComboBox>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>

#include <map>
#include <set>

#include "suggest_check.h"

using namespace bs::ui;
using bs::profiler::EventKind;

namespace {

/// p = 4 ranks, m = a = 8 micro-batches, b = 2, one global batch, no baseline; the tiny model's
/// width with 12 layers, so v = 3 at p = 4 gives every chunk a block (the runtime refuses fewer).
WhatIfConfig multiStageConfig(const std::string& schedule, int stagesPerRank)
{
    WhatIfConfig c;
    c.run.model.preset = "";
    c.run.model.shape.layers = 12;
    c.run.schedule.name = schedule;
    c.run.pipeline.stages = 4;
    c.run.pipeline.microbatches = 8;
    c.run.pipeline.accum = 0;
    c.run.pipeline.microBatchSize = 2;
    c.run.pipeline.stagesPerRank = stagesPerRank;
    c.baseline.clear();
    c.batches = 1;
    return c;
}

PredictedRun predicted(const WhatIfConfig& c)
{
    auto run = predictRun(c, c.schedule());
    if (!run) {
        qFatal("%s", run.error().describe().c_str());
    }
    return std::move(run).value();
}

bool selectSchedule(TuningPanel& panel, const char* name)
{
    const int i = panel.scheduleBox()->findData(QString::fromLatin1(name));
    panel.scheduleBox()->setCurrentIndex(i);
    return i >= 0;
}

} // namespace

class TestMultiStageViews : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Interleaved 1F1B at v = 2: 4 lanes (ranks), each rank's forwards and backwards in both
    // chunks; chunk 1 painted in its own shade; the tooltip names rank, chunk and model stage.
    void timelineTellsChunksApart()
    {
        const PredictedRun run = predicted(multiStageConfig("interleaved-1f1b", 2));
        const TimelineIndex& index = *run.index;
        QCOMPARE(index.stagesPerRank(), 2);
        QCOMPARE(index.stages(), 4); // one lane per rank
        std::map<std::pair<int, int>, int> computePerRankChunk;
        index.snapshot()->forEach([&](const bs::profiler::TraceEvent& e) {
            if (e.isCompute() && (e.kind == EventKind::Forward || e.kind == EventKind::Backward)) {
                ++computePerRankChunk[{e.stage, index.chunkOf(e)}];
            }
        });
        for (int r = 0; r < 4; ++r) {
            for (int chunk = 0; chunk < 2; ++chunk) {
                QCOMPARE(computePerRankChunk[std::make_pair(r, chunk)], 2 * 8); // F and B of 8 micro-batches
                QCOMPARE(index.stageOfChunk(r, chunk), chunk * 4 + r); // loop: stage i on rank i mod p
            }
        }
        QCOMPARE(index.stageOfChunk(4, 0), -1);

        TimelineView view;
        view.setIndex(run.index);
        view.resize(1400, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QImage image = view.grab().toImage();
        const QRgb shade0 = chunkColor(ColorRole::Forward, 0).rgb();
        const QRgb shade1 = chunkColor(ColorRole::Forward, 1).rgb();
        QVERIFY(shade0 != shade1);
        const auto list = buildDrawList(index, view.zoom()->coordinatesFor(view.eventAreaWidth()));
        const DrawRect* chunk1 = nullptr;
        for (const DrawRect& d : list.blocks) {
            if (d.role == ColorRole::Forward && d.chunk == 1 && !d.folded() && d.w >= 8) {
                chunk1 = &d;
                break;
            }
        }
        QVERIFY(chunk1 != nullptr);
        // The rectangle is drawn in chunk 1's shade (hatch lines over it), not chunk 0's.
        const QRect row = view.rowRect(chunk1->row);
        int inShade1 = 0;
        int inShade0 = 0;
        for (int x = static_cast<int>(chunk1->x) + 1; x < static_cast<int>(chunk1->x + chunk1->w) - 2; ++x) {
            for (int y = row.top() + 1; y < row.bottom(); ++y) {
                const QRgb px = image.pixel(TimelineView::kGutterPx + x, y);
                inShade1 += px == shade1 ? 1 : 0;
                inShade0 += px == shade0 ? 1 : 0;
            }
        }
        QVERIFY2(inShade1 > 0 && inShade0 == 0, qPrintable(QStringLiteral("%1 / %2").arg(inShade1).arg(inShade0)));
        const QPoint at(TimelineView::kGutterPx + static_cast<int>(chunk1->x + chunk1->w / 2), row.center().y());
        const QString tip = view.tooltipTextAt(at);
        const int rank = index.rows()[chunk1->row].stage;
        QVERIFY2(tip.contains(QStringLiteral("rank %1, chunk 1 (stage %2), forward").arg(rank).arg(4 + rank)),
            qPrintable(tip));
    }

    // ZB-V's V placement: rank r holds stages r and 2p − 1 − r.
    void timelineNamesTheVPlacementsStages()
    {
        const PredictedRun run = predicted(multiStageConfig("zb-v", 0));
        const TimelineIndex& index = *run.index;
        QCOMPARE(index.stagesPerRank(), 2);
        for (int r = 0; r < 4; ++r) {
            QCOMPARE(index.stageOfChunk(r, 0), r);
            QCOMPARE(index.stageOfChunk(r, 1), 2 * 4 - 1 - r);
        }
    }

    // The v box follows the catalogue's traits: a range for loop schedules, fixed 2 for V ones,
    // fixed 1 (and "0 = its own" in the config) for one-per-rank ones; predictions use it.
    void panelTakesVWhereTheScheduleAllows()
    {
        TuningPanel panel;
        QSpinBox* v = panel.stagesPerRankSpin();
        QVERIFY(selectSchedule(panel, "interleaved-1f1b"));
        const auto* loop = bs::runtime::findSchedule("interleaved-1f1b");
        QVERIFY(v->isEnabled());
        QCOMPARE(v->minimum(), loop->defaultStagesPerRank);
        QCOMPARE(v->maximum(), loop->maxStagesPerRank);
        QCOMPARE(panel.placementLabel()->text(), QStringLiteral("loop"));
        v->setValue(3);
        QCOMPARE(panel.config().run.pipeline.stagesPerRank, 3);
        QVERIFY(selectSchedule(panel, "zb-v"));
        QVERIFY(!v->isEnabled());
        QCOMPARE(v->value(), 2);
        QCOMPARE(panel.placementLabel()->text(), QStringLiteral("V"));
        QVERIFY(selectSchedule(panel, "paci"));
        QVERIFY(!v->isEnabled());
        QCOMPARE(v->value(), 1);
        QCOMPARE(panel.config().run.pipeline.stagesPerRank, 0); // one stage per rank: nothing to write

        // The prediction takes v for the schedule that allows it, not for the baseline.
        WhatIfConfig c = multiStageConfig("interleaved-1f1b", 3);
        c.baseline = "1f1b";
        panel.setConfig(c);
        QCOMPARE(v->value(), 3);
        const auto prediction = predict(panel.config());
        QVERIFY(prediction);
        QCOMPARE((*prediction)->primary.result.schedule.stagesPerRank(), 3);
        QCOMPARE((*prediction)->primary.result.schedule.stages(), 12);
        QCOMPARE((*prediction)->baseline->result.schedule.stagesPerRank(), 1);
        QVERIFY((*prediction)->primary.label.find("v=3") != std::string::npos);
    }

    // Suggest searches (a, b) at the panel's v and says so; its top row, applied, keeps v and
    // predicts what it listed (the steady throughput Suggest ranks by).
    void suggestTakesV()
    {
        TuningPanel panel;
        panel.setConfig(multiStageConfig("interleaved-1f1b", 3));
        QSignalSpy ready(&panel, &TuningPanel::suggestionsReady);
        panel.suggest();
        QVERIFY(ready.wait(60000));
        QTableWidget* table = panel.suggestions();
        QVERIFY2(table->rowCount() > 0, qPrintable(panel.findChild<QLabel*>()->text()));
        const double listed = table->item(0, 2)->data(Qt::UserRole).toDouble();
        QVERIFY(table->item(0, 2)->toolTip().contains(QStringLiteral("v = 3")));
        QSignalSpy changed(&panel, &TuningPanel::configChanged);
        QMetaObject::invokeMethod(table, "cellDoubleClicked", Q_ARG(int, 0), Q_ARG(int, 0));
        QCOMPARE(changed.size(), 1);
        const WhatIfConfig applied = panel.config();
        QCOMPARE(applied.run.pipeline.stagesPerRank, 3);
        const PredictedRun run = predicted(applied);
        QCOMPARE(run.result.schedule.stagesPerRank(), 3);
        const auto again = bs::ui::test::suggestedThroughputAt(panel, applied); // Suggest's steady figure
        QVERIFY(again && std::abs(*again - listed) <= 0.01 * listed);
    }

    // The find box's "stage N" is the model stage, not the lane (rank): at p = 4, v = 2 (loop),
    // "stage 5 forward" finds the 8 forwards of chunk 1 on rank 1 (it found none: no lane 5), and
    // "stage 1 forward" only chunk 0's there (it found both chunks'); "5F2" is one action. On a V
    // placement stage 7 is rank 0's second chunk. The placeholder names the model stage.
    void findMatchesTheModelStage()
    {
        CompareView view;
        const PredictedRun loop = predicted(multiStageConfig("interleaved-1f1b", 2));
        view.setSlot(0, QStringLiteral("loop"), QString(), loop.index);
        QCOMPARE(view.findNext(QStringLiteral("stage 5 forward")), 8);
        QCOMPARE(view.findNext(QStringLiteral("stage 1 forward")), 8);
        QCOMPARE(view.findNext(QStringLiteral("5F2")), 1);
        QVERIFY(view.findBox()->placeholderText().contains(QStringLiteral("model stage")));
        QVERIFY(view.findBox()->toolTip().contains(QStringLiteral("not rank 5")));
        const auto query = parseEventQuery("stage 5 forward");
        QVERIFY(query);
        const TimelineIndex& index = *loop.index;
        const auto hits = findEvents(*index.snapshot(), *query,
            [&](const bs::profiler::TraceEvent& e, std::size_t stage) { return index.isWorkOfStage(e, stage); });
        QCOMPARE(hits.size(), std::size_t(8));
        for (std::size_t i : hits) {
            const auto& e = (*index.snapshot())[i];
            QCOMPARE(int(e.stage), 1); // rank 1
            QCOMPARE(index.chunkOf(e), 1);
        }
        // Updates carry no chunk: they count for every stage of their rank.
        QCOMPARE(view.findNext(QStringLiteral("stage 5 update")), view.findNext(QStringLiteral("stage 1 update")));
        QVERIFY(view.findNext(QStringLiteral("stage 5 update")) > 0);

        const PredictedRun vee = predicted(multiStageConfig("zb-v", 0));
        view.setSlot(0, QStringLiteral("v"), QString(), vee.index);
        const auto last = findEvents(*vee.index->snapshot(), *parseEventQuery("7I"),
            [&](const bs::profiler::TraceEvent& e, std::size_t stage) { return vee.index->isWorkOfStage(e, stage); });
        QCOMPARE(last.size(), std::size_t(8));
        for (std::size_t i : last) {
            QCOMPARE(int((*vee.index->snapshot())[i].stage), 0); // rank 0 holds stages 0 and 2p − 1 = 7
        }
        // One stage per lane: the lane is the stage, and the placeholder says plain "stage".
        const PredictedRun flat = predicted(multiStageConfig("1f1b", 0));
        view.setSlot(0, QStringLiteral("flat"), QString(), flat.index);
        QCOMPARE(view.findNext(QStringLiteral("stage 3 forward")), 8);
        QVERIFY(!view.findBox()->placeholderText().contains(QStringLiteral("model stage")));
    }

    // The comparison table's "stages / rank" row: "3 · loop", "2 · v", "1".
    void comparisonTableShowsVAndPlacement()
    {
        const PredictedRun loop = predicted(multiStageConfig("interleaved-1f1b", 3));
        const PredictedRun vee = predicted(multiStageConfig("zb-v", 0));
        const PredictedRun flat = predicted(multiStageConfig("1f1b", 0));
        ComparisonModel model;
        model.setRuns({summaryOf(loop, loop.result.report, FiguresOf::Prediction),
            summaryOf(vee, vee.result.report, FiguresOf::Prediction),
            summaryOf(flat, flat.result.report, FiguresOf::Prediction)});
        const int row = static_cast<int>(ComparisonModel::Metric::StagesPerRank);
        QCOMPARE(model.index(row, 0).data().toString(), QStringLiteral("3 · loop"));
        QCOMPARE(model.index(row, 1).data().toString(), QStringLiteral("2 · v"));
        QCOMPARE(model.index(row, 2).data().toString(), QStringLiteral("1"));
        QCOMPARE(model.index(row, 3).data().toString(), QString()); // no difference of layouts
        QCOMPARE(model.headerData(row, Qt::Vertical).toString(), QStringLiteral("stages / rank"));
    }

    // A rank's memory is every chunk's: at the same layers per rank, interleaved 1F1B's weights
    // and optimizer state per rank equal 1F1B's exactly, its per-rank report has p lanes, and the
    // window's memory chart shows p bars of each rank's peak.
    void memoryPerRankCountsEveryChunk()
    {
        const PredictedRun interleaved = predicted(multiStageConfig("interleaved-1f1b", 2));
        const PredictedRun flat = predicted(multiStageConfig("1f1b", 0));
        QCOMPARE(interleaved.staticBytes.size(), std::size_t(4));
        QCOMPARE(interleaved.result.report.perStage.size(), std::size_t(4));
        for (std::size_t r = 0; r < 4; ++r) {
            QVERIFY(interleaved.staticBytes[r] > 0);
            QCOMPARE(interleaved.staticBytes[r], flat.staticBytes[r]); // two chunks' weights, summed
            QVERIFY(interleaved.result.report.perStage[r].peakMemoryBytes >= interleaved.staticBytes[r]);
        }

        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        QSignalSpy predictedSpy(window.engine(), &PredictionEngine::predicted);
        WhatIfConfig c = multiStageConfig("interleaved-1f1b", 2);
        c.baseline = "paci";
        window.tuning()->setConfig(c);
        window.tuning()->stagesPerRankSpin()->setValue(3); // a user's change: predicts
        QVERIFY(predictedSpy.wait(10000));
        QApplication::processEvents();
        const auto p = predictedSpy.last().at(0).value<PredictionPtr>();
        QCOMPARE(p->primary.result.schedule.stagesPerRank(), 3);
        const TimelineIndex* shown = window.compare()->timeline(0)->index();
        QVERIFY(shown != nullptr);
        QCOMPARE(shown->stagesPerRank(), 3);
        QCOMPARE(window.compare()->legend()->chunks(), 3);
        // The chosen schedule's chart (predictions chart the primary run): one bar per rank.
        bool titledRank = false;
        for (QAbstractAxis* axis : window.memoryChart()->chart()->axes(Qt::Horizontal)) {
            titledRank = titledRank || axis->titleText().startsWith(QStringLiteral("rank"));
        }
        QVERIFY(titledRank);
        for (int r = 0; r < 4; ++r) {
            const double mib =
                static_cast<double>(p->primary.result.report.perStage[static_cast<std::size_t>(r)].peakMemoryBytes)
                / (1024.0 * 1024.0);
            QVERIFY2(std::abs(window.memoryChart()->stageMiB(r) - mib) < 1e-6,
                qPrintable(QStringLiteral("rank %1: %2 vs %3").arg(r).arg(window.memoryChart()->stageMiB(r)).arg(mib)));
        }
    }
};

QTEST_MAIN(TestMultiStageViews)
#include "tst_multi_stage_views.moc"
