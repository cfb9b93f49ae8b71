// Suggest ranks by predicted time to target when a run on screen measured a gradient noise scale
// (issue 30, item 3): with a small noise scale a larger window only buys a larger batch per update
// that each sample gains less from, so the largest a is not the pick (throughput over a few
// simulated batches picked it). Without such a run it ranks by steady throughput and says why.
#include "base/atomic_file.h"
#include "runtime/plan/common/noise_scale.h"
#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/rundir/run_dir_writer.h"
#include "runtime/plan/rundir/run_metrics.h"
#include "runtime/plan/sim/goodput_runs.h"
#include "ui/shell/main_window.h"
#include "ui/tuning/tuning_panel.h"

#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include "laptop_fixtures.h"
#include "noise_fixtures.h"

using namespace bs::ui;
using bs::runtime::TuneObjective;

namespace {

/// A run directory (the demo's config) whose metrics.jsonl records noise scales near `bNoise`
/// from step 1 on and, at step 3, a validation loss of 2.0.
bool writeRunWithNoise(const QString& dir, double bNoise)
{
    auto writer = bs::runtime::RunDirWriter::create(dir.toStdString());
    if (!writer || !writer->writeConfig(bs::runtime::demoConfig())) {
        return false;
    }
    for (const bs::runtime::BatchMetrics& m : bs::test::metricsWithNoise(bNoise)) {
        if (!writer->appendMetrics(nlohmann::json(m))) {
            return false;
        }
    }
    return true;
}

/// Adds a noise-scale record near `bNoise` to every batch of a run's metrics.jsonl.
bool addNoise(const QString& path, double bNoise)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return false;
    }
    std::string rewritten;
    for (const QByteArray& line : file.readAll().split('\n')) {
        if (line.trimmed().isEmpty()) {
            continue;
        }
        nlohmann::json record = nlohmann::json::parse(line.toStdString());
        record["noise"] =
            bs::runtime::combineStages({bs::runtime::StageNoiseScale{0, 1.0, bNoise, bNoise, 4.0, 16.0, 1}});
        rewritten += record.dump() + "\n";
    }
    file.close();
    return static_cast<bool>(bs::writeFileAtomic(path.toStdString(), rewritten));
}

WhatIfConfig paciSettings()
{
    WhatIfConfig c;
    c.run.schedule.name = "paci";
    c.run.pipeline.stages = 4;
    c.run.pipeline.microbatches = 8;
    c.run.pipeline.accum = 8;
    c.run.pipeline.microBatchSize = 4;
    return c;
}

QString statusOf(const TuningPanel& panel)
{
    for (const QLabel* label : panel.findChildren<QLabel*>()) {
        if (label->text().contains(QStringLiteral(" simulated ("))) {
            return label->text();
        }
    }
    return {};
}

// A press while a search runs (one started by opening a run, say) queues another: wait until the
// last one has listed its rows.
bool runSuggest(TuningPanel& panel)
{
    QSignalSpy ready(&panel, &TuningPanel::suggestionsReady);
    panel.suggest();
    do {
        if (!ready.wait(120'000)) {
            return false;
        }
    } while (panel.isSearching());
    return true;
}

} // namespace

class TestTunerTarget : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void withoutNoiseScaleRanksBySteadyThroughputAndSaysWhy()
    {
        TuningPanel panel;
        panel.setConfig(paciSettings());
        panel.findChild<QSpinBox*>(QStringLiteral("maxLagSpin"))->setValue(16);
        QVERIFY(runSuggest(panel));
        QCOMPARE(panel.suggestObjective(), TuneObjective::Throughput);
        QTableWidget* table = panel.suggestions();
        QVERIFY(table->rowCount() > 0);
        QCOMPARE(table->columnCount(), static_cast<int>(TuningPanel::kSuggestColumns));
        QVERIFY2(statusOf(panel).contains(QStringLiteral("measured noise scale")), qPrintable(statusOf(panel)));
        QVERIFY(table->item(0, TuningPanel::kColThroughput)->toolTip().contains(QStringLiteral("steady")));
        QCOMPARE(table->item(0, TuningPanel::kColTimeToTarget)->text(), QStringLiteral("—"));
    }

    void smallNoiseScaleDoesNotPickTheLargestWindow()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(writeRunWithNoise(dir.path(), 4.0)); // B_noise 4: past it each sample buys less
        TuningPanel panel;
        panel.setConfig(paciSettings());
        panel.findChild<QSpinBox*>(QStringLiteral("maxLagSpin"))->setValue(16);
        const std::string runDir = dir.path().toStdString();
        panel.setStatisticsRuns([runDir] { return *bs::runtime::statisticsRunsFrom({runDir}); }); // as if opened
        QVERIFY(runSuggest(panel));
        QCOMPARE(panel.suggestObjective(), TuneObjective::TimeToTarget);
        QTableWidget* table = panel.suggestions();
        QVERIFY(table->rowCount() > 1);
        const QString status = statusOf(panel);
        QVERIFY2(status.contains(QStringLiteral("time to target")) && status.contains(QStringLiteral("noise scale")),
            qPrintable(status));
        // The largest window searched (a = 32) is slower to the target: not the pick.
        QVERIFY2(table->item(0, TuningPanel::kColAccum)->text().toInt() < 32,
            qPrintable(table->item(0, TuningPanel::kColAccum)->text()));
        double previous = 0;
        for (int r = 0; r < table->rowCount(); ++r) {
            const QTableWidgetItem* time = table->item(r, TuningPanel::kColTimeToTarget);
            QVERIFY2(time->text().contains(QStringLiteral("×")), qPrintable(time->text())); // no target: relative
            const double t = time->data(Qt::UserRole).toDouble();
            QVERIFY(t > 0 && t >= previous); // fastest to the target first
            previous = t;
            const double efficiency = table->item(r, TuningPanel::kColEfficiency)->text().toDouble();
            QVERIFY(efficiency > 0 && efficiency < 1);
        }
        QCOMPARE(table->item(0, TuningPanel::kColTimeToTarget)->text().left(4), QStringLiteral("1.00"));

        // A target loss the run reached fits E_min: times in seconds.
        panel.findChild<QDoubleSpinBox*>(QStringLiteral("targetLossSpin"))->setValue(2.5);
        QVERIFY(runSuggest(panel));
        QCOMPARE(panel.suggestObjective(), TuneObjective::TimeToTarget);
        QVERIFY(table->rowCount() > 0);
        const QString seconds = table->item(0, TuningPanel::kColTimeToTarget)->text();
        QVERIFY2(seconds.contains(QStringLiteral(" ± ")) && !seconds.contains(QStringLiteral("×"))
                && seconds.endsWith(QStringLiteral("s")),
            qPrintable(seconds));
        QVERIFY(table->item(0, TuningPanel::kColTimeToTarget)->data(Qt::UserRole).toDouble() > 0);
    }

    // In the window: an opened run directory of the model shown that recorded a noise scale is
    // what Suggest predicts time to target from.
    void openedRunGivesSuggestItsNoiseScale()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.path() + QStringLiteral("/paci");
        QVERIFY(test::writeRunDir(dir, "paci", 4));
        QVERIFY(addNoise(dir + QStringLiteral("/metrics.jsonl"), 4.0));
        MainWindow window(false);
        window.resize(1280, 800);
        TuningPanel* panel = window.tuning();
        panel->findChild<QSpinBox*>(QStringLiteral("maxLagSpin"))->setValue(16);
        QVERIFY(runSuggest(*panel));
        QCOMPARE(panel->suggestObjective(), TuneObjective::Throughput); // nothing opened yet
        QString error;
        QVERIFY2(window.openRunDirectory(dir, &error), qPrintable(error));
        QVERIFY(runSuggest(*panel));
        QCOMPARE(panel->suggestObjective(), TuneObjective::TimeToTarget);
        QVERIFY2(statusOf(*panel).contains(QStringLiteral("noise scale 4")), qPrintable(statusOf(*panel)));
        QVERIFY(panel->suggestions()->item(0, TuningPanel::kColAccum)->text().toInt() < 32);
    }
};

QTEST_MAIN(TestTunerTarget)
#include "tst_tuner_target.moc"
