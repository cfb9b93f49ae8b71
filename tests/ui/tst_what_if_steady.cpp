// The what-if's figures are the steady state's and its headline is time to target (issue 30,
// item 3). With 2 simulated batches PACI a = 8 on the tiny model at p = 8 showed "steady bubble
// 38.2 %", the whole 2 batches' bubble with its warm-up; its steady bubble is 16 %. A prediction
// now gives the steady state's bubble and throughput and says how many batches the timeline
// shows; a measured run too short for a steady window says so instead of showing one. With runs
// that measured a noise scale (live ones included: their metrics, not a file), the what-if leads
// with the predicted time to target.
#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/sim/simulator.h"
#include "ui/common/format.h"
#include "ui/models/comparison_row.h"
#include "ui/shell/run_figures.h"
#include "ui/shell/run_workspace.h"
#include "ui/tuning/figures_table.h"
#include "ui/tuning/tuning_panel.h"

#include <QDoubleSpinBox>
#include <QTest>

#include "noise_fixtures.h"

using namespace bs::ui;

namespace {

/// The issue's settings: PACI a = m = 8, b = 8, tiny GPT on 8 stages, CPU profile, 2 batches.
WhatIfConfig issueSettings()
{
    WhatIfConfig c; // defaultWhatIfRun(): paci, p = 8, m = 8, b = 8, tiny, cpu
    c.batches = 2;
    return c;
}

/// The steady bubble the issue measured with 64 batches, straight from simulate().
double steadyBubbleOf64Batches(const WhatIfConfig& c)
{
    auto scenario = scenarioFor(c, c.schedule());
    if (!scenario) {
        return -1;
    }
    scenario->batches = 64;
    auto request = bs::runtime::makeGptRequest(*scenario);
    auto simulated =
        request ? bs::runtime::simulate(*request) : bs::Result<bs::runtime::SimulationResult>(request.error());
    return simulated ? simulated->report.steadyBubbleFraction : -1;
}

/// A live run's metrics, held in memory (noise_fixtures.h).
std::shared_ptr<const std::vector<bs::runtime::BatchMetrics>> liveMetrics(double bNoise)
{
    return std::make_shared<const std::vector<bs::runtime::BatchMetrics>>(bs::test::metricsWithNoise(bNoise));
}

} // namespace

class TestWhatIfSteady : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void predictedSteadyBubbleIsTheSteadyStates()
    {
        const WhatIfConfig c = issueSettings();
        auto prediction = predict(c);
        QVERIFY(prediction);
        const PredictedRun& paci = (*prediction)->primary;
        QVERIFY(paci.steady.reached);
        const double steady64 = steadyBubbleOf64Batches(c);
        QVERIFY2(steady64 > 0.10 && steady64 < 0.22, qPrintable(QString::number(steady64))); // the issue's 16 %
        // One steady batch's bubble: near the 64-batch run's steady window (which still holds part of
        // the long warm-up), and far below the 2 batches' bubble that was shown as "steady".
        QVERIFY2(std::abs(paci.steady.bubbleFraction - steady64) < 0.03,
            qPrintable(QStringLiteral("%1 vs %2").arg(paci.steady.bubbleFraction).arg(steady64)));
        QVERIFY2(
            paci.result.report.bubbleFraction > 0.30, qPrintable(QString::number(paci.result.report.bubbleFraction)));
        QVERIFY(paci.steady.samplesPerSecond > paci.result.throughputSamplesPerSecond); // no warm-up in it

        // The panel and the comparison table show the steady state's figures as predicted, and the
        // 2 batches' bubble under its own name.
        const QString table = figuresTable(**prediction);
        QVERIFY2(table.contains(QStringLiteral("steady bubble</td><td align='right'><b>")
                     + formatPercent(paci.steady.bubbleFraction) + QStringLiteral("</b>"))
                && !table.contains(formatPercent(paci.result.report.bubbleFraction))
                && table.contains(QStringLiteral("steady throughput")),
            qPrintable(table));
        const ComparisonRow row = summaryOf(paci, paci.result.report, FiguresOf::Prediction);
        QCOMPARE(row.steadyBubbleFraction, paci.steady.bubbleFraction);
        QCOMPARE(row.throughput, paci.steady.samplesPerSecond);
        QVERIFY(predictedFiguresLine(paci).startsWith(QStringLiteral("steady ")));
    }

    // A measured run of 2 batches has no steady window: its table and its column say so ("—"),
    // never the whole run's bubble under the name "steady".
    void measuredRunWithoutSteadyWindowShowsNone()
    {
        auto prediction = predict(issueSettings());
        QVERIFY(prediction);
        Prediction measured = **prediction;
        measured.primary.steady = {}; // a measured run: nothing predicted
        QVERIFY(measured.primary.result.report.steadyBusy < 0); // 2 batches: none steady
        const QString table = figuresTable(measured, /*measured=*/true);
        QVERIFY2(table.contains(QStringLiteral("none steady")), qPrintable(table));
        const ComparisonRow row = summaryOf(measured.primary, measured.primary.result.report, FiguresOf::Measurement);
        QCOMPARE(row.steadyBubbleFraction, -1.0);

        WhatIfConfig four = issueSettings(); // 4 batches (the demo's): a steady window exists
        four.batches = 4;
        auto longer = predict(four);
        QVERIFY(longer);
        QVERIFY((*longer)->primary.result.report.steadyBusy >= 0);
        const ComparisonRow measuredFour =
            summaryOf((*longer)->primary, (*longer)->primary.result.report, FiguresOf::Measurement);
        QCOMPARE(measuredFour.steadyBubbleFraction, (*longer)->primary.result.report.steadyBubbleFraction);
    }

    // The headline: with a measured noise scale (here a live run's metrics, held in memory) the
    // what-if predicts time to target at the steady throughput, relative to the baseline until a
    // run reaches the target loss, then in seconds; without one it says none was measured.
    void timeToTargetIsTheHeadline()
    {
        TuningPanel panel;
        panel.setConfig(issueSettings());
        QVERIFY(!panel.config().goodput);
        const QString none = figuresTable(**predict(panel.config()));
        QVERIFY2(none.contains(QStringLiteral("no noise scale yet")), qPrintable(none));

        bs::runtime::RunConfig live = bs::runtime::demoConfig();
        panel.setStatisticsRuns([live] {
            return std::vector<bs::runtime::StatisticsRun>{{"run PACI a=8 b=8", live, liveMetrics(64.0), false}};
        });
        QVERIFY(panel.config().goodput);
        QVERIFY(panel.statisticsNote().isEmpty());
        auto relative = predict(panel.config());
        QVERIFY(relative);
        const PredictedRun& paci = (*relative)->primary;
        QVERIFY(paci.timeToTarget && !paci.timeToTarget->inSeconds);
        QVERIFY(paci.batchPerUpdate == 64); // a · b
        const QString relativeTable = figuresTable(**relative);
        QVERIFY2(relativeTable.startsWith(QStringLiteral("<table cellspacing='2'><tr><td><b>time to target")),
            qPrintable(relativeTable));
        QVERIFY2(relativeTable.contains(QStringLiteral("× 1F1B-flush")), qPrintable(relativeTable));

        // A target the run reached (2.0 at step 3): E_min is fitted, times are seconds, and the
        // figure is samples to target over the steady throughput.
        panel.findChild<QDoubleSpinBox*>(QStringLiteral("targetLossSpin"))->setValue(2.5);
        QVERIFY(panel.config().goodput && panel.config().goodput->hasSamplesMin());
        auto seconds = predict(panel.config());
        QVERIFY(seconds);
        const PredictedRun& run = (*seconds)->primary;
        QVERIFY(run.timeToTarget && run.timeToTarget->inSeconds);
        const double expected =
            panel.config().goodput->samplesToTarget(64.0, run.lagBound) / run.steady.samplesPerSecond;
        QCOMPARE(run.timeToTarget->seconds, expected);
        QVERIFY2(figuresTable(**seconds).contains(QStringLiteral(" ± ")), qPrintable(figuresTable(**seconds)));
        QCOMPARE(summaryOf(run, run.result.report, FiguresOf::Prediction).timeToTargetS, expected);
    }

    // The window's statistics runs: measured runs of the model shown, a live one's metrics shared
    // with its slot (no copy, no file); a replay's never.
    void workspaceGivesLiveRunsMetrics()
    {
        RunWorkspace workspace;
        workspace.enterRunMode();
        auto plan = predictRun(issueSettings(), "paci");
        QVERIFY(plan);
        const bs::runtime::RunConfig config = bs::runtime::demoConfig();
        const int liveSlot = workspace.reserve();
        workspace.placeStarted(liveSlot, *plan, config, /*measured=*/true);
        auto update = std::make_shared<RunUpdate>();
        update->metrics = *liveMetrics(64.0);
        workspace.slot(liveSlot)->latest = update;
        const int replaySlot = workspace.reserve();
        workspace.placeStarted(replaySlot, *plan, config, /*measured=*/false);
        workspace.slot(replaySlot)->latest = update;

        const auto runs = workspace.statisticsRuns(calibrationScope(config));
        QCOMPARE(runs.size(), std::size_t{1});
        QCOMPARE(runs[0].metrics.get(), &update->metrics);
        QVERIFY(!runs[0].settingsChanged);
        QVERIFY(workspace.statisticsRuns("model 1x1 h1 T1 V1 on cpu").empty());
        QVERIFY(bs::runtime::goodputFromRuns(runs, std::nullopt));
    }
};

QTEST_MAIN(TestWhatIfSteady)
#include "tst_what_if_steady.moc"
