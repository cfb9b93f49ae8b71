// The window on a 1280×800 laptop screen: it fits (minimum width <= 1100 px), panels export at
// twice their on-screen size, the find box jumps to an action, F1 lists the shortcuts.
#include "ui/compare/compare_view.h"
#include "ui/shell/exporters.h"
#include "ui/shell/main_window.h"
#include "ui/timeline/timeline_view.h"
#include "ui/timeline/timeline_zoom.h"
#include "ui/timeline/event_search.h"

#include <QImage>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QTest>

using namespace bs::ui;

class TestWindowFit : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void fitsALaptopScreen()
    {
        MainWindow window(false);
        window.show();
        const int minimum = window.minimumSizeHint().width();
        qInfo("minimum width %d px", minimum);
        QVERIFY2(minimum <= 1100, qPrintable(QString::number(minimum)));
        window.resize(1280, 800);
        QApplication::processEvents();
        QCOMPARE(window.width(), 1280);
    }

    void panelsExportAtTwiceTheirSize()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        QApplication::processEvents();
        QTemporaryDir dir;
        QString error;
        QVERIFY2(window.exportPanelsTo(dir.path(), &error), qPrintable(error));
        const QImage image(dir.filePath(QStringLiteral("timelines.png")));
        QCOMPARE(image.width(), 2 * window.compare()->width());
        QCOMPARE(image.height(), 2 * window.compare()->height());
    }

    void findJumpsToTheAction()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        DemoOptions demo;
        demo.batches = 2;
        QVERIFY(window.runDemoToEnd(demo));
        CompareView* compare = window.compare();
        const int hits = compare->findNext(QStringLiteral("1F2"));
        QCOMPARE(hits, 1); // one forward of micro-batch 2 on stage 1
        const auto q = parseEventQuery("1F2");
        QVERIFY(q);
        const auto* trace = compare->timeline(0)->index()->snapshot();
        const auto found = findEvents(*trace, *q);
        QCOMPARE(found.size(), std::size_t(1));
        const auto& e = (*trace)[found[0]];
        const auto& view = compare->zoom()->coordinates();
        QVERIFY(view.viewStart() <= static_cast<double>(e.start) && view.viewEnd() >= static_cast<double>(e.end));
        QVERIFY(view.span() < static_cast<double>(compare->timeline(0)->index()->endTime()) / 4);
        // Words work too; every backward of stage 0 over 2 batches of 8 micro-batches.
        QCOMPARE(compare->findNext(QStringLiteral("stage 0 backward")), 16);
        QCOMPARE(compare->findNext(QStringLiteral("mb 3 forward")), 8); // one per stage
        QCOMPARE(compare->findNext(QStringLiteral("banana")), 0);
    }

    void queriesParse()
    {
        const auto compact = parseEventQuery("3b");
        QVERIFY(compact && compact->stage == 3u && compact->kind == bs::profiler::EventKind::Backward && !compact->microbatch);
        const auto words = parseEventQuery("Stage 2 update");
        QVERIFY(words && words->stage == 2u && words->kind == bs::profiler::EventKind::Update);
        QVERIFY(!parseEventQuery(""));
        QVERIFY(!parseEventQuery("stage x"));
        QVERIFY(shortcutHelpText().contains(QStringLiteral("W / S")));
        QVERIFY(shortcutHelpText().contains(QStringLiteral("Home, F")));
    }
};

QTEST_MAIN(TestWindowFit)
#include "tst_window_fit.moc"
