// The training-metrics panels: loss against virtual or wall time with the target line and each
// run's time-to-target marked (the same number timeToTarget() gives the table), drift (mean and
// max over stages) and throughput per run, and the time-axis selector that offers wall time only
// when a run recorded it. Also the one filter of reported batches (plottableBatch).
#include "ui/charts/metric_series.h"
#include "ui/charts/metrics_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>

using namespace bs::ui;

namespace {

/// Loss 4, 3, 2, 1 at virtual 1..4 s; wall time = 10 × virtual when `wall`.
LossCurve makeRun(const QString& label, bool wall, double tokensPerS = 100)
{
    LossCurve c;
    c.label = label;
    for (int i = 0; i < 4; ++i) {
        bs::runtime::BatchMetrics s;
        s.virtualTimeS = static_cast<double>(i + 1);
        s.step = i;
        s.trainLoss = 4.0 - i;
        if (wall) {
            s.wallTimeS = 10.0 * (i + 1);
            s.tokensPerSWall = tokensPerS / 10;
        }
        s.tokensPerSVirtual = tokensPerS * (i + 1);
        s.stages.resize(2);
        s.stages[0].meanDrift = 0.01 * (i + 1);
        s.stages[1].meanDrift = 0.03 * (i + 1);
        c.samples.push_back(s);
    }
    return c;
}

/// The run with a validation loss equal to its training loss at every step (time to target counts
/// the validation loss only).
LossCurve withValidation(LossCurve c)
{
    for (auto& s : c.samples) {
        s.valLoss = s.trainLoss;
    }
    return c;
}

template<typename T>
std::vector<T*> seriesOf(QChartView* view)
{
    std::vector<T*> out;
    for (QAbstractSeries* s : view->chart()->series()) {
        if (auto* t = qobject_cast<T*>(s); t && (std::is_same_v<T, QScatterSeries> || !qobject_cast<QScatterSeries*>(s))) {
            out.push_back(t);
        }
    }
    return out;
}

} // namespace

class TestTimeSeriesCharts : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void timeToTargetIsTheValidationLossReachingIt()
    {
        LossCurve run = makeRun(QStringLiteral("a"), true);
        QVERIFY(!timeToTarget(run.samples, 2.5, TimeAxis::Virtual)); // train loss 2 at t = 3 does not count
        run.samples[1].valLoss = 2.6;
        run.samples[3].valLoss = 2.4; // validation reaches 2.5 only at t = 4
        QCOMPARE(timeToTarget(run.samples, 2.5, TimeAxis::Virtual).value(), 4.0);
        QCOMPARE(timeToTarget(run.samples, 2.5, TimeAxis::Wall).value(), 40.0);
        QVERIFY(!timeToTarget(run.samples, 0.5, TimeAxis::Virtual)); // never reached
        QVERIFY(!timeToTarget(run.samples, 0, TimeAxis::Virtual)); // no target
        QVERIFY(!timeToTarget(makeRun(QStringLiteral("b"), false).samples, 2.5, TimeAxis::Wall));
    }

    // One filter for a live run's batches and a loaded run directory's (runtime::loadRun reads
    // and checks the files; a malformed record never reaches the UI): the record itself, whole.
    void plottableBatchesAreTheReportedOnes()
    {
        bs::runtime::BatchMetrics b;
        b.step = 3;
        b.trainLoss = 2.5;
        b.valLoss = 2.7;
        b.virtualTimeS = 1.5;
        b.wallTimeS = 9.0;
        b.tokensPerSVirtual = 1000;
        b.tokensPerSWall = 170;
        b.stages.resize(2);
        b.stages[0].meanDrift = 0.01;
        b.stages[1].meanDrift = 0.02;
        b.stages[1].peakBytes = 4096;
        const auto s = plottableBatch(b);
        QVERIFY(s);
        QVERIFY(*s == b); // nothing copied out, nothing lost
        QCOMPARE(sampleTime(*s, TimeAxis::Wall).value(), 9.0);
        QCOMPARE(driftOverStages(*s)->first, 0.015);
        QCOMPARE(driftOverStages(*s)->second, 0.02);
        b.valLoss = std::nan(""); // a diverged validation pass is not plotted
        QVERIFY(!plottableBatch(b)->valLoss);
        b.wallTimeS.reset(); // an old run directory without wall_time_s: virtual time only
        QVERIFY(!sampleTime(*plottableBatch(b), TimeAxis::Wall));
        QVERIFY(!hasWallTime({b}));
        b.trainLoss = std::nan(""); // a rank without the losses
        QVERIFY(!plottableBatch(b));
    }

    void lossMarksTargetAndTimeToTargetOnEitherAxis()
    {
        LossChartView view;
        view.resize(600, 400);
        QVERIFY(!view.hasData());
        QVERIFY(view.chart()->title().contains(QStringLiteral("no metrics")));
        LossCurve fast = withValidation(makeRun(QStringLiteral("fast"), true));
        LossCurve slow = withValidation(makeRun(QStringLiteral("slow"), true));
        for (auto& s : slow.samples) {
            s.virtualTimeS *= 2;
            *s.wallTimeS *= 2;
        }
        view.setCurves({fast, slow}, 2.5);
        QVERIFY(view.hasData());
        QCOMPARE(view.targetTimes().size(), std::size_t(2));
        QCOMPARE(view.targetTimes()[0].value(), 3.0);
        QCOMPARE(view.targetTimes()[1].value(), 6.0);
        const auto markers = seriesOf<QScatterSeries>(&view);
        QCOMPARE(markers.size(), std::size_t(2));
        QCOMPARE(markers[1]->at(0), QPointF(6.0, 2.5));
        QVERIFY(markers[1]->name().contains(QStringLiteral("6.00 s")));
        QVERIFY(markers[1]->pointLabelsVisible());
        // Two runs (training and validation lines each) and the target line.
        const auto lines = seriesOf<QLineSeries>(&view);
        QCOMPARE(lines.size(), std::size_t(5));
        QCOMPARE(lines[4]->at(0).y(), 2.5);
        QCOMPARE(lines[4]->at(1).x(), 8.0); // spans the longest run

        view.setTimeAxis(TimeAxis::Wall);
        QCOMPARE(view.targetTimes()[0].value(), 30.0);
        QCOMPARE(seriesOf<QScatterSeries>(&view)[0]->at(0).x(), 30.0);
        QCOMPARE(seriesOf<QLineSeries>(&view)[0]->at(3).x(), 40.0);
    }

    void validationLossIsItsOwnLine()
    {
        LossChartView view;
        LossCurve run = makeRun(QStringLiteral("v"), false);
        run.samples[1].valLoss = 3.5;
        run.samples[3].valLoss = 1.5;
        view.setCurves({run});
        const auto lines = seriesOf<QLineSeries>(&view);
        QCOMPARE(lines.size(), std::size_t(2));
        QVERIFY(lines[1]->name().contains(QStringLiteral("(val)")));
        QCOMPARE(lines[1]->count(), 2);
        QCOMPARE(lines[1]->at(1), QPointF(4.0, 1.5));
        QVERIFY(view.targetTimes()[0] == std::nullopt); // no target given
    }

    void wallAxisHidesRunsWithoutWallTime()
    {
        LossChartView view;
        view.setCurves({makeRun(QStringLiteral("live"), true), makeRun(QStringLiteral("sim"), false)}, 2.5);
        view.setTimeAxis(TimeAxis::Wall);
        QVERIFY(view.hidesRuns());
        QCOMPARE(seriesOf<QLineSeries>(&view).size(), std::size_t(2)); // live + target
        QVERIFY(view.chart()->title().contains(QStringLiteral("some runs hidden"))); // short, drawn whole
        QVERIFY(view.toolTip().contains(QStringLiteral("without wall time"))); // the whole story
        QVERIFY(!view.targetTimes()[1]);
    }

    void driftShowsMeanAndMaxOverStages()
    {
        DriftChartView view;
        QVERIFY(!view.hasData());
        view.setCurves({makeRun(QStringLiteral("paci"), true)});
        const auto lines = seriesOf<QLineSeries>(&view);
        QCOMPARE(lines.size(), std::size_t(2));
        QCOMPARE(lines[0]->at(1).y(), 0.04); // mean of 0.02 and 0.06
        QCOMPARE(lines[1]->at(1).y(), 0.06); // max
        QCOMPARE(lines[0]->at(1).x(), 2.0);
        view.setTimeAxis(TimeAxis::Wall);
        QCOMPARE(seriesOf<QLineSeries>(&view)[0]->at(1).x(), 20.0);
    }

    void noiseScaleIsEachRunsMeasuredEstimate()
    {
        NoiseScaleChartView view;
        LossCurve run = makeRun(QStringLiteral("paci"), true);
        view.setCurves({run});
        QVERIFY(!view.hasData()); // no batch has an estimate: nothing drawn, the title says why
        for (int i = 1; i < 4; ++i) { // none at the first batch (no update finished yet)
            bs::runtime::NoiseScaleEstimate n;
            n.traceSigma = 100.0 * i;
            n.gradSqNorm = 2.0;
            n.bSimple = 50.0 * i;
            run.samples[static_cast<std::size_t>(i)].noise = n;
        }
        run.samples[2].noise->bSimple = std::nan(""); // |G|² not yet > 0: no point
        view.setCurves({run});
        QVERIFY(view.hasData());
        auto lines = seriesOf<QLineSeries>(&view);
        QCOMPARE(lines.size(), std::size_t(1));
        QCOMPARE(lines[0]->count(), 2);
        QCOMPARE(lines[0]->at(0), QPointF(2.0, 50.0));
        QCOMPARE(lines[0]->at(1), QPointF(4.0, 150.0));
        view.setTimeAxis(TimeAxis::Wall);
        QCOMPARE(seriesOf<QLineSeries>(&view)[0]->at(1), QPointF(40.0, 150.0));
    }

    void throughputPerRunOnTheChosenClock()
    {
        ThroughputChartView view;
        view.setCurves({makeRun(QStringLiteral("a"), true, 100), makeRun(QStringLiteral("b"), true, 300)});
        auto lines = seriesOf<QLineSeries>(&view);
        QCOMPARE(lines.size(), std::size_t(2));
        QCOMPARE(lines[1]->at(2), QPointF(3.0, 900.0));
        view.setTimeAxis(TimeAxis::Wall);
        lines = seriesOf<QLineSeries>(&view);
        QCOMPARE(lines[1]->at(2), QPointF(30.0, 30.0));
    }

    void selectorOffersWallTimeOnlyWhenRecorded()
    {
        MetricsPanel panel;
        panel.resize(1200, 400);
        panel.setRuns({makeRun(QStringLiteral("sim"), false)});
        QVERIFY(!panel.wallTimeAvailable());
        QCOMPARE(panel.timeAxis(), TimeAxis::Virtual);
        panel.setRuns({withValidation(makeRun(QStringLiteral("live"), true))}, 2.5);
        QVERIFY(panel.wallTimeAvailable());
        panel.axisSelector()->setCurrentIndex(1); // what a user's click does
        QCOMPARE(panel.timeAxis(), TimeAxis::Wall);
        QCOMPARE(panel.drift()->timeAxis(), TimeAxis::Wall);
        QCOMPARE(panel.noiseScale()->timeAxis(), TimeAxis::Wall);
        QCOMPARE(panel.throughput()->timeAxis(), TimeAxis::Wall);
        QCOMPARE(panel.loss()->targetTimes()[0].value(), 30.0);
        // Typing a target moves the marker and tells the window (for the comparison table).
        QSignalSpy edited(&panel, &MetricsPanel::targetLossEdited);
        panel.targetBox()->setValue(1.5);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(panel.loss()->targetTimes()[0].value(), 40.0); // loss 1 at wall 40 s
        panel.setRuns({makeRun(QStringLiteral("live"), true)}, 3.5); // a run's own target: shown, not "edited"
        QCOMPARE(panel.targetLoss(), 3.5);
        QCOMPARE(edited.count(), 1);
        // A virtual-only set of runs falls back to virtual time.
        panel.setRuns({makeRun(QStringLiteral("sim"), false)});
        QCOMPARE(panel.timeAxis(), TimeAxis::Virtual);
        QCOMPARE(panel.axisSelector()->currentIndex(), 0);
    }
};

QTEST_MAIN(TestTimeSeriesCharts)
#include "tst_time_series_charts.moc"
