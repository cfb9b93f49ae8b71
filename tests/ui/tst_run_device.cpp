// The what-if panel's "Run on" selector (issue 11): it lists what this machine has (cpu first, then
// each CUDA device the driver reports, probed without LibTorch), a run trains where it says, and
// File ▸ Export keeps asking for GPUs when the what-if simulates a GPU profile.
#include "runtime/plan/gpu/gpu_probe.h"
#include "ui/tuning/tuning_panel.h"
#include "ui/tuning/what_if.h"

#include <QComboBox>
#include <QTest>

using namespace bs::ui;

class TestRunDevice : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void selectorListsThisMachinesDevices()
    {
        TuningPanel panel;
        QComboBox* runOn = nullptr;
        for (QComboBox* box : panel.findChildren<QComboBox*>()) {
            if (box->toolTip().startsWith(QStringLiteral("Where Run trains"))) {
                runOn = box;
            }
        }
        QVERIFY(runOn != nullptr);
        const auto choices = bs::runtime::gpu::deviceChoices();
        QCOMPARE(runOn->count(), static_cast<int>(choices.size()));
        QCOMPARE(runOn->itemData(0).toString(), QStringLiteral("cpu"));
        QCOMPARE(panel.config().run.device.name, std::string("cpu"));
    }

    void runsTrainWhereTheSelectorSaysAndExportsAskForGpus()
    {
        WhatIfConfig c;
        c.deviceProfile = "h100"; // the profile the what-if simulates
        c.run.device.name = "cpu";
        QCOMPARE(toRunConfig(c).device.name, std::string("cpu"));
        QCOMPARE(toExportConfig(c).device.name, std::string("cuda"));
        c.run.device.name = "cuda:1";
        QCOMPARE(toRunConfig(c).device.name, std::string("cuda:1"));
        QCOMPARE(toExportConfig(c).device.name, std::string("cuda:1"));
        c.deviceProfile = "cpu";
        c.run.device.name = "cpu";
        QCOMPARE(toExportConfig(c).device.name, std::string("cpu"));
        bs::runtime::RunConfig rc;
        rc.device.name = "cuda:0";
        QCOMPARE(fromRunConfig(rc).run.device.name, std::string("cuda:0"));
    }
};

QTEST_MAIN(TestRunDevice)
#include "tst_run_device.moc"
