// File > Open with a folder of torch.profiler rank traces: the job lands in a compare slot with one
// timeline row per stage and the same measured bubbles the CLI's analyze reports.
#include "profiler/import/job_import.h"
#include "profiler/import/measured_bubbles.h"
#include "ui/common/format.h"
#include "ui/compare/compare_view.h"
#include "ui/models/comparison_model.h"
#include "ui/shell/main_window.h"
#include "ui/timeline/timeline_view.h"

#include <QLabel>
#include <QTemporaryDir>
#include <QTest>

using namespace bs::ui;

class TestOpenKineto : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void opensAFolderOfRankTraces()
    {
        const QString folder = QStringLiteral(BS_KINETO_DATA_DIR "/1f1b-4");
        QVERIFY(MainWindow::isKinetoJobFolder(folder));
        MainWindow window(false);
        window.resize(1400, 900);
        QString error;
        QVERIFY2(window.openRunDirectory(folder, &error), qPrintable(error));
        const TimelineIndex* index = window.compare()->timeline(0)->index();
        QVERIFY(index);
        QCOMPARE(index->stages(), 4);
        auto job = bs::profiler::kineto::importKinetoJob({fromQt(folder)});
        QVERIFY(job);
        QCOMPARE(index->eventCount(), job->trace->size());
        const auto& summary = window.compare()->model()->runs().at(0);
        const auto bubbles = bs::profiler::kineto::measureBubbles(*job);
        QCOMPARE(summary.bubbleFraction, bubbles.stageReport.bubbleFraction);
        // The slot says how the receives' time splits into waiting and transfer, as analyze does.
        bs::TimeNs waiting = 0;
        for (const auto& rank : bubbles.ranks) {
            waiting += rank.recvWaiting;
        }
        const QString expected =
            QStringLiteral("%1 ms waiting for the sender").arg(static_cast<double>(waiting) / 1e6, 0, 'f', 1);
        bool shown = false;
        for (const QLabel* label : window.compare()->findChildren<QLabel*>()) {
            shown = shown || label->toolTip().contains(expected);
        }
        QVERIFY2(shown, qPrintable(expected));
    }

    // An interleaved job (two stages per rank): one timeline row per stage, the slot's settings
    // are the catalogue's schedule of its PyTorch class on its placement, and the what-if is
    // calibrated from its per-stage costs.
    void opensAnInterleavedJobAsItsOwnSchedule()
    {
        const QString folder = QStringLiteral(BS_KINETO_DATA_DIR "/interleaved-2");
        MainWindow window(false);
        window.resize(1400, 900);
        QString error;
        QVERIFY2(window.openRunDirectory(folder, &error), qPrintable(error));
        const TimelineIndex* index = window.compare()->timeline(0)->index();
        QVERIFY(index);
        QCOMPARE(index->stages(), 4);
        const auto& slot = window.workspace()->slot(0);
        QVERIFY(slot.has_value());
        QCOMPARE(slot->config.schedule.name, std::string("interleaved-1f1b"));
        QCOMPARE(slot->config.pipeline.stages, 2);
        QCOMPARE(slot->config.pipeline.stagesPerRank, 2);
        QCOMPARE(slot->plan.result.schedule.rankOfStage, (std::vector<int>{0, 1, 0, 1}));
        QVERIFY(window.calibration());
        QCOMPARE(window.calibration()->stages, 4);
        auto job = bs::profiler::kineto::importKinetoJob({fromQt(folder)});
        QVERIFY(job);
        QCOMPARE(window.compare()->model()->runs().at(0).bubbleFraction,
            bs::profiler::kineto::measureBubbles(*job).stageReport.bubbleFraction);
        // What a torch.profiler trace does not say is shown as unknown, not as a figure: no
        // throughput (sequences per micro-batch are not in it), no memory (micro-batch counts
        // read as bytes were "4 B"). Measured figures stay.
        const auto* model = window.compare()->model();
        const auto cell = [&](ComparisonModel::Metric metric) {
            return model->data(model->index(static_cast<int>(metric), 0)).toString();
        };
        QCOMPARE(cell(ComparisonModel::Metric::Throughput), QStringLiteral("—"));
        QCOMPARE(cell(ComparisonModel::Metric::PeakMemory), QStringLiteral("—"));
        QCOMPARE(cell(ComparisonModel::Metric::BubbleFraction),
            formatPercent(bs::profiler::kineto::measureBubbles(*job).stageReport.bubbleFraction));
        QVERIFY(!cell(ComparisonModel::Metric::Makespan).contains(QStringLiteral("—")));
    }

    // A profile of three steps (issue 33): the slot is the median step, m = 6 (the three steps
    // merged read m = 7), and its line names each step's bubble and the step shown.
    void opensAThreeStepProfileAsItsMedianStep()
    {
        const QString folder = QStringLiteral(BS_KINETO_DATA_DIR "/1f1b-3");
        MainWindow window(false);
        window.resize(1400, 900);
        QString error;
        QVERIFY2(window.openRunDirectory(folder, &error), qPrintable(error));
        auto job = bs::profiler::kineto::importKinetoJob({fromQt(folder)});
        QVERIFY(job);
        QCOMPARE(job->steps.size(), std::size_t{3});
        const auto& median = bs::profiler::kineto::medianStep(*job);
        const auto& slot = window.workspace()->slot(0);
        QVERIFY(slot.has_value());
        QCOMPARE(slot->config.pipeline.microbatches, 6);
        QCOMPARE(window.compare()->timeline(0)->index()->eventCount(), median.trace->size());
        QCOMPARE(window.compare()->model()->runs().at(0).bubbleFraction,
            bs::profiler::kineto::measureBubbles(median).stageReport.bubbleFraction);
        const QString expected =
            QStringLiteral("shown and calibrated: #%1 (median step time)").arg(median.profilerStep);
        bool shown = false;
        for (const QLabel* label : window.compare()->findChildren<QLabel*>()) {
            shown = shown || label->toolTip().contains(expected) || label->text().contains(expected);
        }
        QVERIFY2(shown, qPrintable(expected));
    }

    void aBrokenTraceIsReportedWithItsFile()
    {
        QTemporaryDir dir;
        QFile bad(dir.filePath(QStringLiteral("rank0.json")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{\"traceEvents\": [ {\"ph\":\"X\", \"name\":");
        bad.close();
        MainWindow window(false);
        QString error;
        QVERIFY(!window.openRunDirectory(dir.path(), &error));
        QVERIFY2(error.contains(QStringLiteral("rank0.json")) && error.contains(QStringLiteral("byte")), qPrintable(error));
    }
};

QTEST_MAIN(TestOpenKineto)
#include "tst_open_kineto.moc"
