// Weight drift in the comparison table (issue 15 item 3): opened run directories of PACI,
// interleaved 1F1B and PACI on an interleaved placement show the drift their tensors measured, in
// "measured drift" and "max drift" rows, with each model stage's (chunk's) figure and
// its rank and chunk in the cell's tooltip; simulated and predicted runs show "—" there (the cost
// model has no tensors). An opened multi-stage run's peak memory is its ranks', not its first
// stages' laid on the ranks' rows.
#include "base/atomic_file.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/rundir/run_metrics.h"
#include "ui/common/format.h"
#include "ui/compare/compare_view.h"
#include "ui/models/comparison_model.h"
#include "ui/shell/exporters.h"
#include "ui/shell/main_window.h"
#include "ui/shell/run_figures.h"
#include "ui/tuning/what_if.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace bs::ui;
using Metric = ComparisonModel::Metric;
using bs::runtime::StageMetrics;

namespace {

/// p = 4 ranks, m = a = 8 (the what-if simulates one window per global batch), b = 2, two batches.
WhatIfConfig runConfig(const std::string& schedule)
{
    WhatIfConfig c;
    c.run.schedule.name = schedule;
    c.run.pipeline.stages = 4;
    c.run.pipeline.microbatches = 8;
    c.run.pipeline.accum = 0;
    c.run.pipeline.microBatchSize = 2;
    c.run.pipeline.stagesPerRank = schedule == "paci" ? 0 : 2;
    c.baseline.clear();
    c.batches = 2;
    return c;
}

/// Stage s's figures: 10 samples, drift `mean` (max twice it), peak 100 + s bytes.
StageMetrics stageFigures(int s, double mean)
{
    StageMetrics m;
    m.stage = s;
    m.driftSamples = 10;
    m.meanDrift = mean;
    m.maxDrift = 2 * mean;
    m.maxLag = mean > 0 ? 1 : 0;
    m.peakBytes = 100 + s;
    m.paramBytes = 10;
    return m;
}

/// A run directory as the runtime writes it, with `drift[s]` as stage s's measured mean drift:
/// config.toml, the simulated trace as trace.json, metrics.jsonl and summary.json (per_stage and,
/// for multi-stage ranks, per_rank with a peak above any one stage's).
void writeRunDir(const QString& dir, const std::string& schedule, const std::vector<double>& drift)
{
    const WhatIfConfig c = runConfig(schedule);
    auto rc = toRunConfig(c);
    rc.training.steps = c.batches;
    auto run = predictRun(c, schedule);
    QVERIFY2(run, run ? "" : run.error().describe().c_str());
    QVERIFY(bs::writeFileAtomic(fromQt(dir + QStringLiteral("/config.toml")), bs::runtime::toToml(rc)));
    QString error;
    QVERIFY2(exportTrace(*run->result.trace, dir + QStringLiteral("/trace.json"), &error), qPrintable(error));
    bs::runtime::RunSummary summary;
    summary.schedule = schedule;
    summary.steps = c.batches;
    for (std::size_t s = 0; s < drift.size(); ++s) {
        summary.stages.push_back(stageFigures(static_cast<int>(s), drift[s]));
    }
    const auto& schedulePlaced = run->result.schedule;
    if (!schedulePlaced.onePerRank()) {
        for (int r = 0; r < schedulePlaced.ranks(); ++r) {
            bs::runtime::RankMemory rank;
            rank.rank = r;
            for (int s = 0; s < schedulePlaced.stages(); ++s) {
                if (schedulePlaced.rankOf(s) == r) {
                    rank.stages.push_back(s);
                }
            }
            rank.peakBytes = 1000 + r;
            summary.ranks.push_back(rank);
        }
    }
    std::string metrics;
    for (int step = 0; step < c.batches; ++step) {
        bs::runtime::BatchMetrics b;
        b.step = step;
        b.trainLoss = 5.0 - step;
        b.virtualTimeS = 0.1 * (step + 1);
        b.stages = summary.stages;
        metrics += nlohmann::json(b).dump() + "\n";
    }
    QVERIFY(bs::writeFileAtomic(fromQt(dir + QStringLiteral("/metrics.jsonl")), metrics));
    QVERIFY(bs::writeFileAtomic(fromQt(dir + QStringLiteral("/summary.json")), nlohmann::json(summary).dump(2)));
}

/// The table column of the opened run of the schedule displayed as `name` ("paci (PACI) · measured":
/// columns are named by the run, its directory and schedule).
int columnOf(const ComparisonModel& model, const std::string& name)
{
    const std::string tail = " (" + name + ") · measured";
    for (std::size_t i = 0; i < model.runs().size(); ++i) {
        const std::string& label = model.runs()[i].label;
        if (label.size() > tail.size() && label.compare(label.size() - tail.size(), tail.size(), tail) == 0) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

QString cell(const ComparisonModel& model, Metric metric, int column, int role = Qt::DisplayRole)
{
    return model.index(static_cast<int>(metric), column).data(role).toString();
}

} // namespace

class TestMeasuredDrift : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Predictions (the cost model) carry lag but no drift: "—", and no difference.
    void predictedRunsShowNoDrift()
    {
        auto a = predictRun(runConfig("paci-interleaved"), "paci-interleaved");
        auto b = predictRun(runConfig("interleaved-1f1b"), "interleaved-1f1b");
        QVERIFY(a && b);
        ComparisonModel model;
        model.setRuns({summaryOf(*a, a->result.report, FiguresOf::Measurement),
            summaryOf(*b, b->result.report, FiguresOf::Measurement)});
        QCOMPARE(cell(model, Metric::MeanDrift, 0), QStringLiteral("—"));
        QCOMPARE(cell(model, Metric::MaxDrift, 1), QStringLiteral("—"));
        QCOMPARE(cell(model, Metric::MeanDrift, 2), QString()); // difference
        QVERIFY(cell(model, Metric::MaxVersionLag, 0).toInt() > 0); // the simulated lag is there
        QCOMPARE(model.headerData(static_cast<int>(Metric::MeanDrift), Qt::Vertical).toString(),
            QStringLiteral("measured drift"));
    }

    void openedRunsShowTheirMeasuredDriftPerChunk()
    {
        QTemporaryDir root;
        const QString sync = root.filePath(QStringLiteral("interleaved"));
        const QString async = root.filePath(QStringLiteral("paci-interleaved"));
        const QString flat = root.filePath(QStringLiteral("paci"));
        for (const QString& d : {sync, async, flat}) {
            QVERIFY(QDir().mkpath(d));
        }
        writeRunDir(sync, "interleaved-1f1b", std::vector<double>(8, 0.0));
        // Chunk 1 of rank 0 (stage 4) drifts 1e-3, the last stage none.
        writeRunDir(async, "paci-interleaved", {4e-3, 3e-3, 3e-3, 2e-3, 1e-3, 6e-4, 6e-4, 0.0});
        writeRunDir(flat, "paci", {2e-3, 1e-3, 5e-4, 0.0});
        MainWindow window(false);
        window.resize(1400, 900);
        QString error;
        QVERIFY2(window.openRunDirectory(sync, &error), qPrintable(error));
        QVERIFY2(window.openRunDirectory(async, &error), qPrintable(error));
        const ComparisonModel& model = *window.compare()->model();
        const int s = columnOf(model, scheduleDisplayName("interleaved-1f1b"));
        const int a = columnOf(model, scheduleDisplayName("paci-interleaved"));
        QVERIFY2(s >= 0 && a >= 0, (model.runs().at(0).label + " | " + model.runs().back().label).c_str());
        QCOMPARE(cell(model, Metric::MeanDrift, s), QStringLiteral("0.00e+00")); // measured, and exactly 0
        QCOMPARE(cell(model, Metric::MaxDrift, s), QStringLiteral("0.00e+00"));
        const double mean = (4e-3 + 3e-3 + 3e-3 + 2e-3 + 1e-3 + 6e-4 + 6e-4) / 8; // 10 samples each
        QCOMPARE(model.runs()[static_cast<std::size_t>(a)].drift.meanDrift, mean);
        QCOMPARE(cell(model, Metric::MeanDrift, a), QString::number(mean, 'e', 2));
        QCOMPARE(cell(model, Metric::MaxDrift, a), QStringLiteral("8.00e-03"));
        const QString tip = cell(model, Metric::MeanDrift, a, Qt::ToolTipRole);
        QVERIFY2(tip.contains(QStringLiteral("stage 4 (rank 0, chunk 1): mean 1.00e-03, max 2.00e-03")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("stage 7 (rank 3, chunk 1): mean 0.00e+00")), qPrintable(tip));
        // Both runs measured: the difference column compares them.
        const int difference = static_cast<int>(model.runs().size());
        QVERIFY(!cell(model, Metric::MeanDrift, difference).isEmpty());
        // Peak memory per rank: the ranks' own peaks (1000 + r), not stage peaks on rank rows.
        QCOMPARE(model.runs()[static_cast<std::size_t>(a)].peakMemoryBytes, std::int64_t(1003));

        // PACI with one stage per rank beside them (it takes the older slot).
        QVERIFY2(window.openRunDirectory(flat, &error), qPrintable(error));
        const int f = columnOf(model, scheduleDisplayName("paci"));
        QVERIFY(f >= 0);
        QCOMPARE(cell(model, Metric::MaxDrift, f), QStringLiteral("4.00e-03"));
        QVERIFY(cell(model, Metric::MeanDrift, f, Qt::ToolTipRole).contains(QStringLiteral("stage 3: mean 0.00e+00")));
    }
};

QTEST_MAIN(TestMeasuredDrift)
#include "tst_measured_drift.moc"
