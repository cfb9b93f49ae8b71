// The what-if panel's "Run on" selector (issue 11): it lists what this machine has (cpu first, then
// each CUDA device the driver reports, probed without LibTorch), a run trains where it says, and
// File ▸ Export keeps asking for GPUs when the what-if simulates a GPU profile.
#include "runtime/plan/gpu/gpu_probe.h"
#include "ui/tuning/tuning_panel.h"
#include "ui/tuning/what_if.h"

#include <QComboBox>
#include <QStandardItemModel>
#include <QTest>

using namespace bs::ui;

class TestRunDevice : public QObject
{
    Q_OBJECT

    static QComboBox* runOnOf(TuningPanel& panel)
    {
        for (QComboBox* box : panel.findChildren<QComboBox*>()) {
            if (box->toolTip().startsWith(QStringLiteral("Where Run trains"))) {
                return box;
            }
        }
        return nullptr;
    }

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
        const auto choices = bs::runtime::gpu::runDeviceChoices();
        QCOMPARE(runOn->count(), static_cast<int>(choices.size()));
        QCOMPARE(runOn->itemData(0).toString(), QStringLiteral("cpu"));
        QCOMPARE(panel.config().run.device.name, std::string("cpu"));
    }

    // A GPU workstation, forced on this machine (BS_FAKE_GPUS): each GPU is listed; without the
    // CUDA runtime module it is disabled and says why; with it, it can be chosen.
    void eachGpuIsListedAndSaysWhyItCannotTrain()
    {
        qputenv("BS_FAKE_GPUS", "NVIDIA H100 80GB HBM3:80;NVIDIA H100 80GB HBM3:80");
        bs::runtime::gpu::setCudaModuleCheck([] { return std::string("no CUDA runtime module built"); });
        {
            TuningPanel panel;
            QComboBox* runOn = runOnOf(panel);
            QVERIFY(runOn != nullptr);
            QCOMPARE(runOn->count(), 4); // cpu, cuda, cuda:0, cuda:1
            QCOMPARE(runOn->itemData(2).toString(), QStringLiteral("cuda:0"));
            QVERIFY(runOn->itemText(2).contains(QStringLiteral("H100")));
            QVERIFY(runOn->itemText(2).contains(QStringLiteral("no CUDA runtime module built")));
            const auto* items = qobject_cast<QStandardItemModel*>(runOn->model());
            QVERIFY(items != nullptr);
            QVERIFY(!items->item(2)->isEnabled());
            QVERIFY(items->item(0)->isEnabled());
        }
        bs::runtime::gpu::setCudaModuleCheck([] { return std::string(); });
        {
            TuningPanel panel;
            const auto* items = qobject_cast<QStandardItemModel*>(runOnOf(panel)->model());
            QVERIFY(items->item(2)->isEnabled());
        }
        qputenv("BS_FAKE_GPUS", ";"); // a machine without a GPU: one disabled entry that says so
        {
            TuningPanel panel;
            QComboBox* runOn = runOnOf(panel);
            QCOMPARE(runOn->count(), 2);
            QVERIFY(runOn->itemText(1).startsWith(QStringLiteral("GPU: none")));
        }
        qunsetenv("BS_FAKE_GPUS");
        bs::runtime::gpu::setCudaModuleCheck({});
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
