#pragma once
// Shared by the laptop-screen tests (issue 34): a QtTest main on an offscreen screen of a given
// size, and run directories as the runtime writes them (config.toml, trace.json, metrics.jsonl).

#include <QApplication>
#include <QChartView>
#include <QSize>
#include <QString>
#include <QTest>

#include <string>

class QLabel;
class QValueAxis;

namespace bs::ui::test {

/// Points the offscreen platform at a one-screen configuration of `size` (call before QApplication).
void useOffscreenScreen(QSize size);

/// QTEST_MAIN on an offscreen screen of `size`.
template<class T>
int runOnLaptopScreen(int argc, char** argv, QSize size)
{
    useOffscreenScreen(size);
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("bubblescope-test"));
    T test;
    return QTest::qExec(&test, argc, argv);
}

/// A finished run of `schedule` (p = 4, m = 8, b = 2, two global batches) written to `dir` as the
/// runtime writes one: config.toml, the simulated trace, metrics.jsonl with falling loss and
/// drift. `stripRanks`: the trace without its stages_per_rank / placement attributes (a
/// distributed run merged before it wrote them). False (with a QtTest failure) when it cannot.
bool writeRunDir(const QString& dir, const std::string& schedule, int stages, bool stripRanks = false);

/// Fails the test (naming `where`) when a tick label of `axis` repeats its neighbour or is wider
/// (taller) than the room between ticks.
void checkValueAxis(const QValueAxis* axis, const QChart* chart, const QString& where);
/// A chart's title, axes and legend are drawn whole, or the view's tooltip carries what is cut.
void checkChart(const QChartView* view, const QString& where);
/// A plain or rich-text label shows its text whole, or its tooltip says it.
void checkLabel(const QLabel* label, const QString& where);

} // namespace bs::ui::test
