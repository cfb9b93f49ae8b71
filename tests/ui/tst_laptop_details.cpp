// Issue 34, one check per complaint, on a 1280×800 offscreen screen: the first launch and a
// restored geometry stay on the screen; one colour per bubble cause; round ticks and time labels
// that never repeat; the wheel scrolls the tuning panel; runs are named apart (table, key, lanes
// by rank and chunk); the axis follows the runs shown; a plain title; a missing directory said so;
// exported timelines without the find box's text.
#include "ui/charts/loss_chart.h"
#include "ui/charts/metrics_panel.h"
#include "ui/charts/stage_charts.h"
#include "ui/common/format.h"
#include "ui/common/palette.h"
#include "ui/compare/compare_view.h"
#include "ui/shell/main_window.h"
#include "ui/timeline/timeline_index.h"
#include "ui/timeline/timeline_view.h"
#include "ui/timeline/timeline_zoom.h"
#include "ui/tuning/prediction_engine.h"
#include "ui/tuning/tuning_panel.h"

#include <QAbstractBarSeries>
#include <QBarSet>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>
#include <QWheelEvent>

#include <cmath>

#include "laptop_fixtures.h"

using namespace bs::ui;
using namespace bs::ui::test;
using bs::profiler::BubbleCause;

namespace {

QRect available()
{
    return QGuiApplication::primaryScreen()->availableGeometry();
}

QValueAxis* valueAxis(const QChartView& view, Qt::Orientation orientation)
{
    const auto axes = view.chart()->axes(orientation);
    for (QAbstractAxis* axis : axes) {
        if (auto* value = qobject_cast<QValueAxis*>(axis); value && value->isVisible()) {
            return value;
        }
    }
    return nullptr;
}

/// A wheel turn down over `widget`'s centre.
void wheelDown(QWidget* widget)
{
    const QPointF at = QPointF(widget->width() / 2.0, widget->height() / 2.0);
    QWheelEvent wheel(
        at, widget->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &wheel);
}

} // namespace

class TestLaptopDetails : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QCOMPARE(available().size(), QSize(1280, 800));
    }

    // First launch (no saved geometry): no larger than the screen, all of it on the screen.
    void firstLaunchFitsTheScreen()
    {
        QSettings().clear();
        MainWindow window(true);
        window.show();
        QVERIFY2(available().contains(window.frameGeometry()),
            qPrintable(
                QStringLiteral("%1x%2").arg(window.frameGeometry().width()).arg(window.frameGeometry().height())));
    }

    // A geometry saved on a larger screen (or with the old 1815 px minimum) comes back on this one.
    void restoredGeometryIsClampedToTheScreen()
    {
        {
            MainWindow wide(false);
            wide.setGeometry(300, 200, 1815, 1100);
            QSettings().setValue(QStringLiteral("window/geometry"), wide.saveGeometry());
        }
        MainWindow window(true);
        window.show();
        QVERIFY2(available().contains(window.frameGeometry()),
            qPrintable(QStringLiteral("%1,%2 %3x%4")
                           .arg(window.frameGeometry().x())
                           .arg(window.frameGeometry().y())
                           .arg(window.frameGeometry().width())
                           .arg(window.frameGeometry().height())));
        QSettings().clear();
    }

    // 1024×768: the window still fits (its panel and lanes scroll or scale).
    void fitsASmallerScreenToo()
    {
        MainWindow window(false);
        window.resize(1024, 768);
        window.show();
        DemoOptions demo;
        demo.batches = 2;
        QVERIFY(window.runDemoToEnd(demo));
        QSignalSpy predicted(window.engine(), &PredictionEngine::predicted);
        window.tuning()->accumSlider()->setValue(2);
        QVERIFY(predicted.wait(5000));
        QApplication::processEvents();
        const QSize minimum = window.minimumSizeHint();
        QVERIFY2(minimum.width() <= 1024 && minimum.height() <= 768,
            qPrintable(QStringLiteral("%1x%2").arg(minimum.width()).arg(minimum.height())));
    }

    // "flush" was dark red in the chart and pale pink in the key: one colour per cause everywhere.
    void oneColourPerBubbleCause()
    {
        for (int c = 0; c < bs::profiler::kBubbleCauseCount; ++c) {
            const auto cause = static_cast<BubbleCause>(c);
            QCOMPARE(roleColor(roleOf(cause)), bubbleCauseColor(cause)); // timeline and its key
        }
        StageChartData data;
        data.title = QStringLiteral("1F1B");
        data.report.makespan = 1000;
        data.report.perStage.resize(4);
        data.report.perStage[1].idleByCause[static_cast<std::size_t>(BubbleCause::Flush)] = 380;
        data.report.perStage[2].idleByCause[static_cast<std::size_t>(BubbleCause::WarmUp)] = 100;
        BubbleChartView chart;
        chart.resize(400, 260);
        chart.setData(data);
        const auto series = chart.chart()->series();
        auto* bars = qobject_cast<QAbstractBarSeries*>(series.front());
        QVERIFY(bars);
        for (QBarSet* set : bars->barSets()) {
            const BubbleCause cause =
                set->label() == bubbleCauseLabel(BubbleCause::Flush) ? BubbleCause::Flush : BubbleCause::WarmUp;
            QCOMPARE(set->color(), roleColor(roleOf(cause)));
        }
    }

    // Bubble ticks fell at 0/13/25/38: now at round numbers, labels as the values are.
    void bubbleTicksAreRound()
    {
        StageChartData data;
        data.title = QStringLiteral("PACI");
        data.report.makespan = 1000;
        data.report.perStage.resize(8);
        data.report.perStage[7].idleByCause[static_cast<std::size_t>(BubbleCause::Drain)] = 380; // 38 %
        BubbleChartView chart;
        chart.resize(360, 250);
        chart.show();
        chart.setData(data);
        QApplication::processEvents();
        QValueAxis* y = valueAxis(chart, Qt::Vertical);
        QVERIFY(y);
        QVERIFY(y->max() >= 38);
        const double step = (y->max() - y->min()) / (y->tickCount() - 1);
        const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
        QVERIFY2(std::fabs(mantissa - 1) < 1e-9 || std::fabs(mantissa - 2) < 1e-9 || std::fabs(mantissa - 5) < 1e-9,
            qPrintable(QString::number(step)));
        checkChart(&chart, QStringLiteral("bubbles"));
    }

    // "0.... 0.... 1....": a narrow loss chart's time axis reads, with units in its title.
    void timeSeriesAxesRead()
    {
        LossCurve curve;
        curve.label = QStringLiteral("PACI a=8 b=8");
        for (int i = 0; i < 6; ++i) {
            bs::runtime::BatchMetrics b;
            b.step = i;
            b.trainLoss = 10.8 - i;
            b.virtualTimeS = 0.23 * (i + 1);
            curve.samples.push_back(b);
        }
        LossChartView chart;
        chart.resize(300, 220);
        chart.show();
        chart.setCurves({curve});
        QApplication::processEvents();
        QValueAxis* x = valueAxis(chart, Qt::Horizontal);
        QVERIFY(x);
        QVERIFY(x->titleText().contains(QStringLiteral("(s)")));
        QVERIFY(x->tickCount() >= 3);
        checkChart(&chart, QStringLiteral("loss"));
    }

    // The zoomed ruler read "11.8 s 11.8 s 11.8 s": ticks 1 ms apart at 11.8 s differ.
    void rulerTicksNeverRepeat()
    {
        QStringList ticks;
        for (int k = 0; k < 5; ++k) {
            ticks << formatTimeTick(11.8e9 + k * 1e6, 1e6);
        }
        QCOMPARE(ticks.front(), QStringLiteral("11.800 s"));
        QCOMPARE(ticks.removeDuplicates(), 0);
        QCOMPARE(formatTimeTick(0, 2e6), QStringLiteral("0 ms"));
        QCOMPARE(formatTimeTick(5e8, 5e8), QStringLiteral("500 ms"));
        QCOMPARE(formatTimeTick(1.5e9, 5e8), QStringLiteral("1.5 s"));
    }

    // Scrolling the panel moved slider a from 8 to 35: the wheel scrolls the panel unless the
    // slider has focus.
    void wheelScrollsThePanel()
    {
        MainWindow window(false);
        window.resize(1280, 600);
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        auto* scroll = window.findChild<QScrollArea*>(QStringLiteral("tuningScroll"));
        QVERIFY(scroll);
        QTRY_VERIFY(scroll->verticalScrollBar()->maximum() > 0); // the panel is taller than the dock
        QSlider* a = window.tuning()->accumSlider();
        const int before = a->value();
        const int top = scroll->verticalScrollBar()->value();
        wheelDown(a);
        QCOMPARE(a->value(), before);
        QVERIFY(scroll->verticalScrollBar()->value() > top);
        a->setFocus(Qt::MouseFocusReason); // clicked: now it is the slider's wheel
        QVERIFY(a->hasFocus());
        wheelDown(a);
        QVERIFY(a->value() != before);
    }

    // Two runs of one schedule at the same a and b: their columns are told apart.
    void sameSettingsRunsReadApart()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        DemoOptions demo;
        demo.batches = 2;
        demo.baseline = "paci"; // PACI against itself
        QVERIFY(window.runDemoToEnd(demo));
        const auto& runs = window.compare()->model()->runs();
        QCOMPARE(runs.size(), std::size_t(2));
        QVERIFY2(runs[0].label != runs[1].label, runs[0].label.c_str());
        QVERIFY(QString::fromStdString(runs[0].label).startsWith(QStringLiteral("PACI a=8 b=8")));
    }

    // Two opened runs whose directories share a name: the loss key names them apart, in full.
    void metricsKeyNamesEveryRun()
    {
        QTemporaryDir root;
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        QString error;
        for (const char* parent : {"x", "y"}) {
            const QString dir = root.filePath(QLatin1String(parent) + QStringLiteral("/dualpipev"));
            QVERIFY(writeRunDir(dir, "dualpipev", 4));
            QVERIFY2(window.openRunDirectory(dir, &error), qPrintable(error));
        }
        const QString key = window.metricsPanel()->key()->text();
        QVERIFY2(key.contains(QStringLiteral("dualpipev (DualPipeV) #1")) && key.contains(QStringLiteral("#2")),
            qPrintable(key));
        const auto& runs = window.compare()->model()->runs();
        QVERIFY(runs.size() == 2 && runs[0].label != runs[1].label);
    }

    // An imported interleaved job has a lane per model stage: each named by the rank that ran it
    // and which of its stages (chunk) it is; one stage per rank: "rank N".
    void importedLanesNameRankAndChunk()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        QString error;
        QVERIFY2(
            window.openRunDirectory(QStringLiteral(BS_KINETO_DATA_DIR "/interleaved-4"), &error), qPrintable(error));
        const TimelineView* view = window.compare()->timeline(0);
        const TimelineIndex* index = view->index();
        QVERIFY(index);
        QCOMPARE(index->stages(), 8);
        QStringList names;
        for (int lane = 0; lane < index->stages(); ++lane) {
            const auto owner = index->laneOwner(lane);
            QVERIFY(owner);
            QCOMPARE(owner->chunks, 2);
            names << view->laneLabel(lane);
        }
        QCOMPARE(names.front(), QStringLiteral("r0 · c0"));
        QVERIFY2(names.contains(QStringLiteral("r3 · c1")), qPrintable(names.join(QStringLiteral(", "))));
        QCOMPARE(names.removeDuplicates(), 0);
        QVERIFY(!names.contains(QStringLiteral("stage 0")));

        MainWindow flat(false);
        QVERIFY2(flat.openRunDirectory(QStringLiteral(BS_KINETO_DATA_DIR "/1f1b-4"), &error), qPrintable(error));
        QCOMPARE(flat.compare()->timeline(0)->laneLabel(2), QStringLiteral("rank 2"));
    }

    // A distributed DualPipeV run merged without saying its ranks hold two stages: lanes are ranks.
    void distributedDualPipeVLanesAreRanks()
    {
        QTemporaryDir root;
        const QString dir = root.filePath(QStringLiteral("dualpipev-dist"));
        QVERIFY(writeRunDir(dir, "dualpipev", 4, /*stripRanks=*/true));
        MainWindow window(false);
        QString error;
        QVERIFY2(window.openRunDirectory(dir, &error), qPrintable(error));
        const TimelineView* view = window.compare()->timeline(0);
        QVERIFY(view->index());
        QCOMPARE(view->index()->stagesPerRank(), 2);
        QCOMPARE(view->laneLabel(0), QStringLiteral("rank 0"));
        QCOMPARE(view->index()->stageOfChunk(0, 1), 7); // V placement: rank 0 holds stages 0 and 2p-1
    }

    // A live run started after long runs was a sliver on their 18 s axis: the axis follows it.
    void axisFollowsTheRunsShown()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        const bs::TimeNs longRuns = 10'000'000'000'000; // as if runs of hours were shown before
        window.compare()->zoom()->resetRange(0, longRuns);
        DemoOptions demo;
        demo.batches = 2;
        demo.wallSeconds = 3; // paced: the first run is still growing when its first index comes
        window.startDemo(demo);
        QTRY_VERIFY_WITH_TIMEOUT(window.compare()->timeline(0)->index() != nullptr
                && window.compare()->timeline(0)->index()->eventCount() > 0,
            10000);
        const auto& view = window.compare()->zoom()->coordinates();
        QVERIFY2(view.traceEnd() < longRuns / 100, qPrintable(QString::number(static_cast<double>(view.traceEnd()))));
        window.stopRuns();
    }

    // The title named the app twice ("Bubblescope — … — Bubblescope" once the platform appends it).
    void plainTitle()
    {
        MainWindow window(false);
        QCOMPARE(window.windowTitle(), QStringLiteral("Bubblescope"));
        // The platform appends the display name to a title that does not end with it.
        QVERIFY(window.windowTitle().endsWith(QStringLiteral("Bubblescope")));
    }

    // A directory that is not there was reported as "config.toml is missing".
    void missingDirectoryIsReportedMissing()
    {
        QTemporaryDir root;
        MainWindow window(false);
        QString error;
        QVERIFY(!window.openRunDirectory(root.filePath(QStringLiteral("gone")), &error));
        QVERIFY2(error.contains(QStringLiteral("does not exist")), qPrintable(error));
        QVERIFY2(!error.contains(QStringLiteral("config.toml")), qPrintable(error));
    }

    // The exported timelines had the find box's text baked in: the picture is the same with or
    // without a query typed.
    void exportedTimelinesHaveNoFindText()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        DemoOptions demo;
        demo.batches = 2;
        QVERIFY(window.runDemoToEnd(demo));
        QTemporaryDir typed, empty;
        QString error;
        window.compare()->findBox()->setText(QStringLiteral("stage 1 backward"));
        QVERIFY2(window.exportPanelsTo(typed.path(), &error), qPrintable(error));
        QVERIFY(window.compare()->findBox()->isVisible()); // back on screen after the export
        window.compare()->findBox()->clear();
        QVERIFY2(window.exportPanelsTo(empty.path(), &error), qPrintable(error));
        const QImage a(typed.filePath(QStringLiteral("timelines.png")));
        const QImage b(empty.filePath(QStringLiteral("timelines.png")));
        QVERIFY(!a.isNull());
        QVERIFY(a == b);
    }
};

int main(int argc, char** argv)
{
    return runOnLaptopScreen<TestLaptopDetails>(argc, argv, QSize(1280, 800));
}

#include "tst_laptop_details.moc"
