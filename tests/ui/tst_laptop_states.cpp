// Issue 34: the window fits and reads on a 1280×800 laptop in every state. The offscreen screen is
// 1280×800 here (main() below). Every state (the demo, a prediction lane, three lanes, interleaved
// 1F1B, DualPipeV, an imported job, four runs) keeps the window's minimum size on that screen,
// every lane inside its timeline ("three lanes": both DualPipeV runs and a prediction under them), and every label of
// the charts and the table whole (the text drawn is the text meant, or a tooltip carries it).
#include "ui/charts/metrics_panel.h"
#include "ui/charts/stage_charts.h"
#include "ui/compare/compare_view.h"
#include "ui/shell/main_window.h"
#include "ui/timeline/timeline_index.h"
#include "ui/timeline/timeline_view.h"
#include "ui/tuning/prediction_engine.h"
#include "ui/tuning/tuning_panel.h"

#include <QAbstractBarSeries>
#include <QBarCategoryAxis>
#include <QChart>
#include <QFontMetrics>
#include <QHeaderView>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QScreen>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStyleOptionViewItem>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>

#include <functional>

#include "laptop_fixtures.h"

using namespace bs::ui;
using namespace bs::ui::test;

namespace {

constexpr QSize kLaptop(1280, 800);

/// The comparison table: every header and cell as wide as its text.
void checkTable(const QTableView* table, const QString& where)
{
    if (!table->isVisible()) {
        return;
    }
    for (int c = 0; c < table->model()->columnCount(); ++c) {
        const QString name = table->model()->headerData(c, Qt::Horizontal).toString();
        const int width = table->columnWidth(c);
        QVERIFY2(width >= table->horizontalHeader()->sectionSizeHint(c),
            qPrintable(where + QStringLiteral(": header cut: ") + name));
        // More runs than the laptop has room for: the table scrolls sideways (never squeezes).
        QVERIFY2(table->columnViewportPosition(c) + width <= table->viewport()->width()
                || table->horizontalScrollBar()->isVisible(),
            qPrintable(where + QStringLiteral(": column outside the table, no scroll bar: ") + name));
        for (int r = 0; r < table->model()->rowCount(); ++r) {
            QStyleOptionViewItem option;
            option.initFrom(table);
            const QModelIndex cell = table->model()->index(r, c);
            QVERIFY2(width >= table->itemDelegate()->sizeHint(option, cell).width(),
                qPrintable(where + QStringLiteral(": cell cut: ") + cell.data().toString()));
        }
    }
}

/// Every lane of a shown timeline inside it: the last row ends above the view's bottom.
void checkLanes(const TimelineView* view, const QString& where)
{
    if (!view->isVisible() || !view->index()) {
        return;
    }
    const auto rows = view->index()->rows().size();
    QVERIFY(rows > 0);
    const QRect last = view->rowRect(rows - 1);
    QVERIFY2(last.bottom() < view->height(),
        qPrintable(where
            + QStringLiteral(": lane %1 cut (row bottom %2, view %3)")
                  .arg(view->index()->rows().back().stage)
                  .arg(last.bottom())
                  .arg(view->height())));
}

} // namespace

class TestLaptopStates : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
        QCOMPARE(screen.size(), kLaptop); // main() configured the offscreen screen
    }

    void everyStateFitsAndReads_data()
    {
        QTest::addColumn<QString>("state");
        for (const char* s :
            {"demo", "prediction lane", "three lanes", "interleaved", "DualPipeV", "imported job", "four runs"}) {
            QTest::newRow(s) << QString::fromLatin1(s);
        }
    }

    void everyStateFitsAndReads()
    {
        QFETCH(QString, state);
        MainWindow window(false);
        window.resize(kLaptop);
        window.show();
        QTemporaryDir dir;
        QString error;
        QVERIFY2(enterState(window, state, dir.path(), &error), qPrintable(error));
        window.resize(kLaptop);
        QTest::qWait(50);
        const QSize minimum = window.minimumSizeHint();
        qInfo("%s: minimum %dx%d", qPrintable(state), minimum.width(), minimum.height());
        QVERIFY2(minimum.width() <= kLaptop.width() && minimum.height() <= kLaptop.height(),
            qPrintable(QStringLiteral("%1x%2").arg(minimum.width()).arg(minimum.height())));
        QCOMPARE(window.size(), kLaptop);
        for (int tab = 0; tab < 2; ++tab) { // the stage charts, then loss · drift · throughput
            auto* tabs = window.findChild<QTabWidget*>(QStringLiteral("chartTabs"));
            tabs->setCurrentIndex(tab);
            QTest::qWait(20);
            for (const QChartView* view : window.findChildren<QChartView*>()) {
                if (view->isVisible()) {
                    checkChart(
                        view, state + QStringLiteral(" / ") + QString::fromLatin1(view->metaObject()->className()));
                }
            }
        }
        checkTable(window.compare()->table(), state);
        for (const QLabel* label : window.compare()->findChildren<QLabel*>()) {
            checkLabel(label, state);
        }
        for (const QLabel* label : window.metricsPanel()->findChildren<QLabel*>()) {
            checkLabel(label, state);
        }
        for (int slot = 0; slot < CompareView::kSlots; ++slot) {
            checkLanes(window.compare()->timeline(slot), state);
        }
        checkLanes(window.compare()->predictionTimeline(), state);
    }

private:
    /// Puts `window` in `state`; run directories go under `scratch`.
    static bool enterState(MainWindow& window, const QString& state, const QString& scratch, QString* error)
    {
        DemoOptions demo;
        demo.batches = 2;
        if (state == QLatin1String("interleaved")) {
            demo.schedule = "interleaved-1f1b";
        } else if (state == QLatin1String("DualPipeV") || state == QLatin1String("three lanes")) {
            demo.schedule = "dualpipev";
        }
        if (state == QLatin1String("imported job")) {
            return window.openRunDirectory(QStringLiteral(BS_KINETO_DATA_DIR "/interleaved-4"), error);
        }
        if (state == QLatin1String("four runs")) {
            for (const char* schedule : {"paci", "1f1b", "interleaved-1f1b", "dualpipev"}) {
                const QString run = scratch + QLatin1Char('/') + QLatin1String(schedule);
                if (!writeRunDir(run, schedule, 4) || !window.openRunDirectory(run, error)) {
                    return false;
                }
            }
            return true;
        }
        if (!window.runDemoToEnd(demo)) {
            *error = QStringLiteral("the demo did not finish");
            return false;
        }
        if (state == QLatin1String("prediction lane") || state == QLatin1String("three lanes")) {
            QSignalSpy predicted(window.engine(), &PredictionEngine::predicted);
            if (state == QLatin1String("three lanes")) {
                // DualPipeV at p = 8 needs 16 model chunks of the 8-layer model: the what-if refuses
                // it as the runtime would (issue 30); at p = 4 it predicts, its ranks holding two.
                window.tuning()->findChild<QSpinBox*>(QStringLiteral("stagesSpin"))->setValue(4);
            } else {
                QSlider* b = window.tuning()->microBatchSlider(); // every schedule takes b
                b->setValue(b->value() == b->minimum() ? b->minimum() + 1 : b->minimum());
            }
            if (!predicted.wait(5000) || !window.compare()->predictionVisible()) {
                *error = QStringLiteral("no prediction lane");
                return false;
            }
        }
        return true;
    }
};

int main(int argc, char** argv)
{
    return runOnLaptopScreen<TestLaptopStates>(argc, argv, kLaptop);
}

#include "tst_laptop_states.moc"
