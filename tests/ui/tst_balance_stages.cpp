// Run ▸ Balance stages… and the what-if's recompute switch, offscreen: editing a stage's layer
// units changes the predicted figures by exactly the units moved, Balance gives the partitioner's
// answer (FLOP estimates, or measured units from Measure), Apply makes the what-if predict the
// split, and the recompute checkbox trades time for activation memory in the prediction.
#include "runtime/plan/partition/partition_choice.h"
#include "ui/shell/main_window.h"
#include "ui/tuning/balance_dialog.h"
#include "ui/tuning/tuning_panel.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>

#include <numeric>

using namespace bs::ui;
using bs::runtime::UnitCost;

namespace {

/// The tiny GPT's 11 units with a heavy head (as on a large vocabulary): the measured optimum
/// gives the head a stage of its own, which the FLOPs split of whole blocks cannot.
std::vector<UnitCost> heavyHeadUnits()
{
    std::vector<UnitCost> u;
    u.push_back(UnitCost{0.2, 0.4, 4096, 1024, 1000});
    for (int i = 0; i < 8; ++i) {
        u.push_back(UnitCost{1.0, 2.0, 4096, 1024, 2000});
    }
    u.push_back(UnitCost{0.1, 0.2, 64, 16, 100});
    u.push_back(UnitCost{4.0, 8.0, 8192, 2048, 5000});
    return u;
}

} // namespace

class TestBalanceStages : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void editingAStageChangesThePredictedFigures()
    {
        BalanceStagesDialog dialog(WhatIfConfig{}); // tiny, paci p = 8, a = m = 8, b = 8, device profile cpu
        const std::vector<int> flops = dialog.unitsPerStage();
        QCOMPARE(flops, bs::partitionLayers(WhatIfConfig{}.run.model.shape, 8, 8)->unitCount);
        const std::vector<double> before = dialog.predictedStageMs();
        const std::vector<std::int64_t> bytesBefore = dialog.predictedStageBytes();
        QCOMPARE(before.size(), std::size_t(8));
        const QString slowestText = dialog.table()->item(7, 2)->text();
        // The last stage (block 7 + norm + head) gives block 7 to stage 6.
        QSpinBox* last = dialog.unitsSpin(7);
        QVERIFY(last);
        last->setValue(last->value() - 1);
        std::vector<int> expected = flops;
        --expected[7];
        ++expected[6];
        QCOMPARE(dialog.unitsPerStage(), expected);
        const std::vector<double> after = dialog.predictedStageMs();
        QCOMPARE(after.size(), std::size_t(8));
        QCOMPARE(after[6], 2.0 * before[6]); // two blocks now: the device profile times each block alike
        QVERIFY(std::abs(after[7] - (before[7] - before[6])) < 1e-9);
        for (int s = 0; s < 6; ++s) {
            QCOMPARE(after[static_cast<std::size_t>(s)], before[static_cast<std::size_t>(s)]);
        }
        QVERIFY(dialog.predictedStageBytes()[6] > bytesBefore[6]); // a block's activations and weights more
        QVERIFY(dialog.table()->item(7, 2)->text() != slowestText);
        // The what-if predicts exactly what the dialog shows.
        auto predicted = predictRun(dialog.config(), "paci");
        QVERIFY(predicted);
        const auto& report = predicted->result.report;
        const double perMicroBatch = 8.0 * WhatIfConfig{}.batches; // a = 8 micro-batches per batch
        QVERIFY(std::abs(bs::toMillis(report.perStage[6].busy) - after[6] * perMicroBatch)
            < bs::toMillis(report.perStage[6].busy) * 0.2); // busy adds the updates
        QCOMPARE(report.perStage[6].peakMemoryBytes, dialog.predictedStageBytes()[6]);
        // Growing a stage takes from the nearest stage with more than one unit.
        dialog.unitsSpin(1)->setValue(2);
        const std::vector<int> grown = dialog.unitsPerStage();
        QCOMPARE(std::accumulate(grown.begin(), grown.end(), 0), 11);
        QCOMPARE(grown[1], 2);
    }

    void balanceGivesThePartitionersAnswer()
    {
        WhatIfConfig config;
        config.run.model.preset = "deep"; // 40 blocks on 8 stages: room to balance
        config.run.model.shape = bs::gptPreset("deep").value();
        BalanceStagesDialog dialog(config);
        QTest::mouseClick(dialog.balanceButton(), Qt::LeftButton);
        bs::runtime::RunConfig measured = toRunConfig(config);
        measured.pipeline.partition = "measured";
        auto choice = bs::runtime::choosePartition(measured);
        QVERIFY2(choice, choice ? "" : choice.error().describe().c_str());
        QCOMPARE(dialog.unitsPerStage(), choice->plan.unitCount);
        QVERIFY(dialog.summary()->text().contains(QStringLiteral("slowest / mean")));
    }

    void measuredUnitsDriveBalance()
    {
        int calls = 0;
        BalanceStagesDialog dialog(WhatIfConfig{}, [&calls](const bs::runtime::RunConfig&) {
            ++calls;
            return bs::Result<std::vector<UnitCost>>(heavyHeadUnits());
        });
        dialog.measure();
        QCOMPARE(calls, 1);
        bs::runtime::PartitionProblem problem;
        problem.units = heavyHeadUnits();
        problem.stages = 8;
        problem.demand = bs::runtime::stageDemand(bs::runtime::toScheduleParams(toRunConfig(WhatIfConfig{}))).value();
        auto plan = bs::runtime::partitionStages(problem);
        QVERIFY(plan);
        QCOMPARE(dialog.unitsPerStage(), plan->unitCount);
        QCOMPARE(dialog.unitsPerStage().back(), 1); // the head alone
        QVERIFY(dialog.unitsPerStage() != bs::partitionLayers(WhatIfConfig{}.run.model.shape, 8, 8)->unitCount);
        // Figures are the measured units' sums: the head's stage is F + B = 12 ms per micro-batch.
        QVERIFY(std::abs(dialog.predictedStageMs().back() - 12.0) < 1e-6);
        QCOMPARE(dialog.config().unitCosts, heavyHeadUnits());
    }

    void applySetsTheWhatIfPartition()
    {
        MainWindow window(false);
        QAction* action = window.findChild<QAction*>(QStringLiteral("balanceStagesAction"));
        QVERIFY(action);
        action->trigger();
        auto* dialog = window.findChild<BalanceStagesDialog*>();
        QVERIFY(dialog);
        dialog->unitsSpin(7)->setValue(dialog->unitsSpin(7)->value() - 1);
        const std::vector<int> edited = dialog->unitsPerStage();
        auto* apply = dialog->findChild<QPushButton*>(QStringLiteral("applyBalance"));
        QVERIFY(apply);
        QTest::mouseClick(apply, Qt::LeftButton);
        const WhatIfConfig c = window.tuning()->config();
        QCOMPARE(QString::fromStdString(c.run.pipeline.partition), QStringLiteral("explicit"));
        QCOMPARE(c.run.pipeline.partitionUnits, edited);
        QCOMPARE(whatIfPartition(c).value(), edited);
        // Another stage count starts from the FLOPs split again (the split was for 8 stages).
        window.tuning()->findChild<QSpinBox*>(QStringLiteral("stagesSpin"))->setValue(4);
        QCOMPARE(QString::fromStdString(window.tuning()->config().run.pipeline.partition), QStringLiteral("flops"));
    }

    void recomputeCheckboxTradesTimeForMemory()
    {
        TuningPanel panel;
        WhatIfConfig stored = panel.config();
        QVERIFY(!stored.run.model.recompute);
        panel.recomputeBox()->setChecked(true);
        WhatIfConfig recomputed = panel.config();
        QVERIFY(recomputed.run.model.recompute);
        auto a = predictRun(stored, "1f1b");
        auto b = predictRun(recomputed, "1f1b");
        QVERIFY(a && b);
        const std::size_t stages = a->result.report.perStage.size();
        for (std::size_t s = 0; s < stages; ++s) {
            const auto& x = a->result.report.perStage[s];
            const auto& y = b->result.report.perStage[s];
            if (s + 1 < stages) { // the last stage holds one micro-batch in flight: nothing to save there
                QVERIFY2(y.peakMemoryBytes < x.peakMemoryBytes, qPrintable(QStringLiteral("stage %1").arg(s)));
            }
            QVERIFY(y.busy > x.busy); // every backward runs the forward again
        }
        WhatIfConfig back = recomputed;
        panel.setConfig(back);
        QVERIFY(panel.recomputeBox()->isChecked());
    }
};

QTEST_MAIN(TestBalanceStages)
#include "tst_balance_stages.moc"
