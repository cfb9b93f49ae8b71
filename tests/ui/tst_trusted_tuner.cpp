// Issue 13's "Done means", end to end on two real runs (tiny GPT, LibTorch, serial driver) written
// by RunSession and opened in the window: a slider move never replaces a measured timeline or its
// table column (the prediction gets its own lane); Suggest's top row, applied, predicts what it
// listed; the one calibration predicts each opened run's own settings within 10 % of what it
// measured; selection and export follow the opened run.
//
// The 10 % check needs steady action times. Real tiny-GPT actions last ~0.2 ms, and on a loaded
// machine one preempted action (10+ ms) on the critical path moves the whole makespan, which no
// per-action mean can predict. So the check is made twice: deterministically on replayed runs (a
// simulated H100 wrote the run directories: its times are affine in b, as real devices' are, so the
// fit must recover them and predict an unmeasured b too; and with slow first actions, as a fresh
// process has), and on the real runs, where it is asserted when their action times are steady
// (max/median per stage and kind below 4, each stage's first action of a kind left out: that is
// the process's start-up, which the calibration costs once) and skipped with the reason otherwise.
#include "base/atomic_file.h"
#include "profiler/io/chrome_trace.h"
#include "runtime/plan/config/config_toml.h"
#include "ui/charts/stage_charts.h"
#include "ui/common/format.h"
#include "ui/compare/compare_view.h"
#include "ui/shell/exporters.h"
#include "ui/shell/main_window.h"
#include "ui/timeline/timeline_view.h"
#include "ui/tuning/prediction_check_view.h"
#include "ui/tuning/tuning_panel.h"
#ifdef BS_HAVE_RUN_SESSION
#include "runtime/train/exec/run_session.h"
#endif

#include "tests/support/tiny_run_config.h"

#include <QAbstractBarSeries>
#include <QAction>
#include <QApplication>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QDir>
#include <QSignalSpy>
#include <QSlider>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>

#include "suggest_check.h"

using namespace bs::ui;
using Metric = ComparisonModel::Metric;

class TestTrustedTuner : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void sliderLeavesOpenedRunsMeasured();
    void suggestTopRowPredictsWhatItListed();
    void calibratedPredictionOfEachOpenedRunIsWithinTenPercent();
    void calibratedPredictionOfReplayedRunsAndAnUnmeasuredB();
    void calibratedPredictionOfReplayedRunsWithColdFirstActions();
    void exportFollowsTheOpenedRun();
    void calibrationPassFitsTheCostsInB();
    void openedRunsChartsShowBothAndTheirWeights();

private:
    /// A window with the PACI run (b = 2) in the top slot and the 1F1B run (b = 4) below.
    bool openBoth(MainWindow& window);

    QTemporaryDir m_dir;
    QString m_paci;
    QString m_flush;
};

void TestTrustedTuner::initTestCase()
{
#ifdef BS_HAVE_RUN_SESSION
    // Two micro-batch sizes, so the calibration is fitted affine in b.
    const std::pair<const char*, int> runs[] = {{"paci", 2}, {"1f1b", 4}};
    for (const auto& [schedule, b] : runs) {
        auto config = bs::test::tinyRunConfig(schedule, 3);
        config.pipeline.microBatchSize = b;
        config.profiling.trace = true;
        const QString dir = m_dir.filePath(QLatin1String(schedule));
        bs::runtime::SessionOptions options;
        options.outDir = fromQt(dir);
        auto session = bs::runtime::RunSession::create(config, options);
        QVERIFY2(session, session ? "" : session.error().describe().c_str());
        const bs::Status ran = session->run();
        QVERIFY2(ran, ran ? "" : ran.error().describe().c_str());
        (schedule == std::string("paci") ? m_paci : m_flush) = dir;
    }
#else
    QSKIP("built without the LibTorch runtime: no run to open");
#endif
}

bool TestTrustedTuner::openBoth(MainWindow& window)
{
    QString error;
    if (!window.openRunDirectory(m_paci, &error) || !window.openRunDirectory(m_flush, &error)) {
        qWarning("%s", qPrintable(error));
        return false;
    }
    return true;
}

void TestTrustedTuner::sliderLeavesOpenedRunsMeasured()
{
    MainWindow window(false);
    window.resize(1280, 800);
    window.show();
    QVERIFY(openBoth(window));
    CompareView* compare = window.compare();
    const TimelineIndex* top = compare->timeline(0)->index();
    const TimelineIndex* bottom = compare->timeline(1)->index();
    QVERIFY(top && bottom);
    const std::size_t topEvents = top->eventCount();
    const auto before = compare->model()->runs();
    QCOMPARE(before.size(), std::size_t(2));
    QVERIFY(before[0].label.find("measured") != std::string::npos);
    QVERIFY(!compare->predictionVisible());

    QSignalSpy predicted(window.engine(), &PredictionEngine::predicted);
    window.tuning()->accumSlider()->setValue(2);
    QVERIFY(predicted.wait(5000));
    QApplication::processEvents();
    // Both measured timelines are the ones opened, untouched.
    QCOMPARE(compare->timeline(0)->index(), top);
    QCOMPARE(compare->timeline(1)->index(), bottom);
    QCOMPARE(compare->timeline(0)->index()->eventCount(), topEvents);
    // Their table columns are unchanged; the prediction is an extra column, labelled so.
    const auto after = compare->model()->runs();
    QCOMPARE(after.size(), std::size_t(3));
    for (std::size_t i = 0; i < 2; ++i) {
        QCOMPARE(after[i].label, before[i].label);
        QCOMPARE(after[i].throughput, before[i].throughput);
        QCOMPARE(after[i].bubbleFraction, before[i].bubbleFraction);
        QCOMPARE(after[i].makespan, before[i].makespan);
    }
    QVERIFY(after[2].label.find("predicted") != std::string::npos);
    // The prediction has its own lane.
    QVERIFY(compare->predictionVisible());
    const auto p = predicted.last().at(0).value<PredictionPtr>();
    QCOMPARE(compare->predictionTimeline()->index(), p->primary.index.get());
    QCOMPARE(after[2].throughput, p->primary.steady.samplesPerSecond); // predicted: the steady state's
}

void TestTrustedTuner::suggestTopRowPredictsWhatItListed()
{
    MainWindow window(false);
    window.resize(1280, 800);
    QVERIFY(openBoth(window));
    QVERIFY(window.calibration());
    TuningPanel* tuning = window.tuning();
    QSignalSpy ready(tuning, &TuningPanel::suggestionsReady);
    tuning->suggest();
    QVERIFY(ready.wait(20'000));
    QTableWidget* table = tuning->suggestions();
    QVERIFY(table->rowCount() > 0);
    const double listed = table->item(0, 2)->data(Qt::UserRole).toDouble();
    QVERIFY(listed > 0);
    QVERIFY(table->item(0, 2)->toolTip().contains(QStringLiteral("calibrated from")));
    QSignalSpy predicted(window.engine(), &PredictionEngine::predicted);
    Q_EMIT table->cellDoubleClicked(0, 0);
    QVERIFY(predicted.wait(5000));
    const auto p = predicted.last().at(0).value<PredictionPtr>();
    QCOMPARE(p->config.accum(), table->item(0, 0)->text().toInt());
    QCOMPARE(p->config.microBatchSize(), table->item(0, 1)->text().toInt());
    QVERIFY(p->config.calibration == window.calibration());
    // The listed figure is the steady state's (the what-if shows its few batches): the same search at
    // the applied settings, with the same calibration, lists it again.
    const auto got = bs::ui::test::suggestedThroughputAt(*tuning, p->config);
    QVERIFY(got);
    QVERIFY2(std::abs(*got - listed) <= 0.01 * listed, qPrintable(QStringLiteral("%1 vs %2").arg(*got).arg(listed)));
}

namespace {

/// The largest max/median of one stage's action times of one kind in the run's trace, leaving out
/// the first of each (the process's start-up: the calibration costs it once, as ColdCost).
double worstSpike(const QString& dir)
{
    auto trace = bs::profiler::readChromeTraceFile(fromQt(dir + QStringLiteral("/trace.json")));
    if (!trace) {
        return 1e9;
    }
    std::map<std::pair<std::size_t, int>, std::vector<std::pair<bs::profiler::TimeNs, double>>> byStart;
    for (const auto& e : trace->events) {
        if (e.isCompute()) {
            byStart[{e.stage, static_cast<int>(e.kind)}].emplace_back(e.start, static_cast<double>(e.duration()));
        }
    }
    double worst = 1;
    for (auto& [key, events] : byStart) {
        std::sort(events.begin(), events.end());
        std::vector<double> v;
        for (std::size_t i = 1; i < events.size(); ++i) {
            v.push_back(events[i].second);
        }
        if (v.empty()) {
            continue;
        }
        std::sort(v.begin(), v.end());
        const double median = v[v.size() / 2];
        if (median > 0) {
            worst = std::max(worst, v.back() / median);
        }
    }
    return worst;
}

/// The throughput rows of the prediction check: (run, relative error).
std::vector<std::pair<QString, double>> throughputErrors(const MainWindow& window)
{
    std::vector<std::pair<QString, double>> rows;
    QTableWidget* check = window.predictionCheck()->table();
    for (int row = 0; row < check->rowCount(); ++row) {
        qInfo("%s | %s | predicted %s | measured %s | error %s", qPrintable(check->item(row, 0)->text()),
            qPrintable(check->item(row, 1)->text()), qPrintable(check->item(row, 2)->text()),
            qPrintable(check->item(row, 3)->text()), qPrintable(check->item(row, 4)->text()));
        if (check->item(row, 1)->text() == QStringLiteral("throughput")) {
            rows.emplace_back(check->item(row, 0)->text(), check->item(row, 4)->data(Qt::UserRole).toDouble());
        }
    }
    return rows;
}

/// A run directory as the runtime writes one, from a simulation of `settings` (replayed run).
/// `coldStart`: each stage's first actions take longer, as a fresh process's do (stage 0's first
/// forward 6x its steady time, every other first action 2x).
bool writeReplayedRun(const QString& dir, const WhatIfConfig& settings, const std::string& schedule,
    bool coldStart = false)
{
    auto scenario = scenarioFor(settings, schedule);
    if (!scenario) {
        return false;
    }
    auto request = bs::runtime::makeGptRequest(*scenario);
    if (!request) {
        return false;
    }
    if (coldStart) {
        for (std::size_t s = 0; s < request->costs.stages.size(); ++s) {
            auto& cost = request->costs.stages[s];
            cost.cold = {(s == 0 ? 5 : 1) * cost.forward, cost.backwardInput, cost.backwardWeight, cost.update};
        }
    }
    auto run = bs::runtime::simulate(*request);
    WhatIfConfig own = settings;
    own.run.schedule.name = schedule;
    auto rc = toRunConfig(own);
    rc.training.steps = settings.batches;
    QString error;
    return run && QDir().mkpath(dir)
        && bs::writeFileAtomic(fromQt(dir + QStringLiteral("/config.toml")), bs::runtime::toToml(rc))
        && exportTrace(*run->trace, dir + QStringLiteral("/trace.json"), &error);
}

} // namespace

void TestTrustedTuner::calibratedPredictionOfReplayedRunsAndAnUnmeasuredB()
{
    WhatIfConfig device; // the "real" machine: an H100 running the tiny GPT on 4 stages
    device.deviceProfile = "h100";
    device.run.pipeline.stages = 4;
    device.batches = 3;
    device.run.pipeline.microbatches = 4;
    device.baseline.clear();
    QTemporaryDir dir;
    WhatIfConfig paci = device;
    paci.run.pipeline.microBatchSize = 2;
    WhatIfConfig flush = device;
    flush.run.pipeline.microBatchSize = 8;
    QVERIFY(writeReplayedRun(dir.filePath(QStringLiteral("paci")), paci, "paci"));
    QVERIFY(writeReplayedRun(dir.filePath(QStringLiteral("1f1b")), flush, "1f1b"));
    MainWindow window(false);
    QString error;
    QVERIFY2(window.openRunDirectory(dir.filePath(QStringLiteral("paci")), &error), qPrintable(error));
    QVERIFY2(window.openRunDirectory(dir.filePath(QStringLiteral("1f1b")), &error), qPrintable(error));
    QVERIFY(window.calibration() && window.calibration()->pooled.affine());
    const auto rows = throughputErrors(window);
    QCOMPARE(rows.size(), std::size_t(2));
    for (const auto& [run, err] : rows) {
        QVERIFY2(std::abs(err) < 0.10, qPrintable(run));
    }
    // The b slider: b = 4 was never measured; the fit predicts what the device does there.
    WhatIfConfig unmeasured = device;
    unmeasured.run.pipeline.microBatchSize = 4;
    auto truth = predictRun(unmeasured, "paci");
    unmeasured.deviceProfile = "cpu"; // the panel's profile: the calibration must replace it
    unmeasured.calibration = window.calibration();
    auto predicted = predictRun(unmeasured, "paci");
    QVERIFY(truth && predicted);
    const double err = predicted->result.throughputSamplesPerSecond / truth->result.throughputSamplesPerSecond - 1;
    qInfo("b = 4 predicted from b = 2 and 8: %+.2f %%", 100 * err);
    QVERIFY2(std::abs(err) < 0.05, qPrintable(QString::number(err)));
}

// The real runs' failure, replayed: a process's first actions are slower (start-up), they lie on
// the critical path, and a mean over every action hid them (PACI predicted 13-17 % too fast).
// The calibration costs each stage's first actions once (ColdCost), so the check of each run's
// own settings is exact again.
void TestTrustedTuner::calibratedPredictionOfReplayedRunsWithColdFirstActions()
{
    WhatIfConfig device;
    device.deviceProfile = "h100";
    device.run.pipeline.stages = 4;
    device.run.pipeline.microbatches = 4;
    device.batches = 3;
    device.baseline.clear();
    QTemporaryDir dir;
    WhatIfConfig paci = device;
    paci.run.pipeline.microBatchSize = 2;
    WhatIfConfig flush = device;
    flush.run.pipeline.microBatchSize = 4;
    QVERIFY(writeReplayedRun(dir.filePath(QStringLiteral("paci")), paci, "paci", true));
    QVERIFY(writeReplayedRun(dir.filePath(QStringLiteral("1f1b")), flush, "1f1b", true));
    MainWindow window(false);
    QString error;
    QVERIFY2(window.openRunDirectory(dir.filePath(QStringLiteral("paci")), &error), qPrintable(error));
    QVERIFY2(window.openRunDirectory(dir.filePath(QStringLiteral("1f1b")), &error), qPrintable(error));
    QVERIFY(window.calibration());
    const auto rows = throughputErrors(window);
    QCOMPARE(rows.size(), std::size_t(2));
    for (const auto& [run, err] : rows) {
        QVERIFY2(std::abs(err) < 0.01, qPrintable(QStringLiteral("%1: %2").arg(run).arg(err)));
    }
    // The source says so.
    const QString source = QString::fromStdString(window.calibration()->sourceFor("paci"));
    QVERIFY2(source.contains(QStringLiteral("first actions +")), qPrintable(source));
}

void TestTrustedTuner::calibratedPredictionOfEachOpenedRunIsWithinTenPercent()
{
    MainWindow window(false);
    window.resize(1280, 800);
    QVERIFY(openBoth(window));
    const CalibrationPtr calibration = window.calibration();
    QVERIFY(calibration);
    QCOMPARE(calibration->samples.size(), std::size_t(2));
    QVERIFY(calibration->pooled.affine()); // b = 2 and b = 4
    // Each schedule is calibrated from its own run.
    QVERIFY(QString::fromStdString(calibration->sourceFor("1f1b")).contains(QStringLiteral("1f1b (1F1B-flush)")));
    QVERIFY(!QString::fromStdString(calibration->sourceFor("1f1b")).contains(QStringLiteral("paci (PACI)")));
    QCOMPARE(window.predictionCheck()->table()->rowCount(), 6); // two runs × (bubble, throughput, step time)
    const auto rows = throughputErrors(window);
    QCOMPARE(rows.size(), std::size_t(2));
    const double spike = std::max(worstSpike(m_paci), worstSpike(m_flush));
    if (spike > 4) {
        QSKIP(qPrintable(QStringLiteral("the machine is busy: one action took %1x its median (the 10 % check "
                                        "needs steady action times; replayed runs are checked above)")
                             .arg(spike, 0, 'f', 1)));
    }
    for (const auto& [run, err] : rows) {
        QVERIFY2(std::abs(err) < 0.10, qPrintable(run));
    }
}

void TestTrustedTuner::exportFollowsTheOpenedRun()
{
    MainWindow window(false);
    window.resize(1280, 800);
    QString error;
    QVERIFY2(window.openRunDirectory(m_paci, &error), qPrintable(error));
    // Opening selects the run: the panel shows its settings.
    QCOMPARE(window.selectedSlot(), 0);
    QCOMPARE(window.tuning()->scheduleBox()->currentData().toString(), QStringLiteral("paci"));
    QCOMPARE(window.tuning()->accumSlider()->value(), 4);
    QCOMPARE(window.tuning()->microBatchSlider()->value(), 2);
    QTemporaryDir out;
    const QString toml = out.filePath(QStringLiteral("tuned.toml"));
    QVERIFY2(window.exportConfigTo(toml, QStringLiteral("toml"), &error), qPrintable(error));
    auto written = bs::runtime::loadRunConfig(fromQt(toml));
    QVERIFY(written);
    QCOMPARE(written->schedule.name, std::string("paci"));
    QCOMPARE(bs::runtime::shownWindowOf(*written), 4);
    QCOMPARE(written->pipeline.microBatchSize, 2);
    QCOMPARE(written->training.steps, 3);
    QCOMPARE(written->model.shape.dModel, 32); // the run's own model, not the panel's preset

    // Selecting the other run moves the panel and the export with it.
    QVERIFY2(window.openRunDirectory(m_flush, &error), qPrintable(error));
    window.selectSlot(0);
    QCOMPARE(window.tuning()->scheduleBox()->currentData().toString(), QStringLiteral("paci"));
    window.selectSlot(1);
    QCOMPARE(window.tuning()->scheduleBox()->currentData().toString(), QStringLiteral("1f1b"));
    QCOMPARE(window.tuning()->microBatchSlider()->value(), 4);
    QVERIFY2(window.exportConfigTo(toml, QStringLiteral("toml"), &error), qPrintable(error));
    written = bs::runtime::loadRunConfig(fromQt(toml));
    QVERIFY(written);
    QCOMPARE(written->schedule.name, std::string("1f1b"));
    QCOMPARE(written->pipeline.microBatchSize, 4);
    QCOMPARE(written->training.steps, 3);

    // The trace export writes the opened runs, even after a slider move.
    QSignalSpy predicted(window.engine(), &PredictionEngine::predicted);
    window.tuning()->accumSlider()->setValue(2);
    QVERIFY(predicted.wait(5000));
    const QString trace = out.filePath(QStringLiteral("trace.json"));
    QVERIFY2(window.exportTracesTo(trace, &error), qPrintable(error));
    auto top = bs::profiler::readChromeTraceFile(fromQt(trace));
    auto bottom = bs::profiler::readChromeTraceFile(fromQt(out.filePath(QStringLiteral("trace-2.json"))));
    QVERIFY(top && bottom);
    QCOMPARE(top->events.size(), window.compare()->timeline(0)->index()->snapshot()->size());
    QCOMPARE(bottom->events.size(), window.compare()->timeline(1)->index()->snapshot()->size());
}

// Run > Calibrate: two short LibTorch runs of the panel's settings at b and 2b feed the one
// calibration, so every prediction is fitted affine in b from this machine and says so.
void TestTrustedTuner::calibrationPassFitsTheCostsInB()
{
#ifdef BS_HAVE_RUN_SESSION
    MainWindow window(false);
    auto* action = window.findChild<QAction*>(QStringLiteral("calibrateAction"));
    QVERIFY(action && action->isEnabled());
    WhatIfConfig small = window.tuning()->config();
    small.run = bs::test::tinyRunConfig("paci", 2);
    small.run.pipeline.microBatchSize = 2;
    window.tuning()->setConfig(small);
    QSignalSpy idle(window.runs(), &RunController::idle);
    QVERIFY(window.startCalibrationPass());
    QVERIFY(idle.wait(240'000));
    QApplication::processEvents(); // the last queued updates
    const CalibrationPtr calibration = window.calibration();
    QVERIFY(calibration);
    const std::string source = calibration->sourceFor("paci");
    QVERIFY2(source.find("b = 2, 4") != std::string::npos, source.c_str());
    QVERIFY2(source.find("affine in b") != std::string::npos, source.c_str());
    QVERIFY(window.tuning()->sourceText().contains(QStringLiteral("calibrated from")));
    // Both runs are shown, measured, in the two slots.
    QVERIFY(window.workspace()->slot(0) && window.workspace()->slot(1));
    QCOMPARE(window.workspace()->slot(1)->config.pipeline.microBatchSize, 4);
#else
    QSKIP("built without the LibTorch runtime: nothing to calibrate from");
#endif
}

// The stage charts of two opened runs: both at once (a bar per run at each stage), and the memory
// chart's weights + optimizer band is the run's own measured params + grads + AdamW state (it was
// empty for opened runs: only the activations were drawn).
void TestTrustedTuner::openedRunsChartsShowBothAndTheirWeights()
{
    MainWindow window(false);
    QVERIFY(openBoth(window));
    auto* bars = qobject_cast<QAbstractBarSeries*>(window.memoryChart()->chart()->series().first());
    QVERIFY(bars);
    QCOMPARE(bars->barSets().first()->label(), QStringLiteral("weights+opt"));
    QCOMPARE(bars->barSets().first()->count(), 2 * 4); // 4 stages, two runs
    for (int i = 0; i < bars->barSets().first()->count(); ++i) {
        QVERIFY2(bars->barSets().first()->at(i) > 0, qPrintable(QString::number(i)));
    }
    auto* both = window.findChild<QAction*>(QStringLiteral("bothRunsAction"));
    QVERIFY(both && both->isChecked());
    both->setChecked(false); // the selected run only
    bars = qobject_cast<QAbstractBarSeries*>(window.memoryChart()->chart()->series().first());
    QCOMPARE(bars->barSets().first()->count(), 4);
}

QTEST_MAIN(TestTrustedTuner)
#include "tst_trusted_tuner.moc"
