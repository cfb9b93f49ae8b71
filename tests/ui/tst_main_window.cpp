// The window end to end, offscreen: the demo fills both slots, the comparison table equals the
// runs' reports, the charts show the reports, a slider switches to predictions; exports work.
#include "ui/charts/stage_charts.h"
#include "ui/compare/compare_view.h"
#include "ui/shell/exporters.h"
#include "ui/shell/main_window.h"
#include "ui/timeline/timeline_view.h"
#include "ui/tuning/tuning_panel.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSlider>
#include <QTest>

using namespace bs::ui;
using Metric = ComparisonModel::Metric;

class TestMainWindow : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void demoFillsBothSlotsAndTheTable()
    {
        MainWindow window(false);
        window.resize(1400, 900);
        window.show();
        DemoOptions demo;
        demo.batches = 2;
        QVERIFY(window.runDemoToEnd(demo));
        CompareView* compare = window.compare();
        for (int slot = 0; slot < CompareView::kSlots; ++slot) {
            QVERIFY(compare->timeline(slot)->index() != nullptr);
            QVERIFY(compare->timeline(slot)->index()->eventCount() > 0);
        }
        // The table equals the simulated reports of the same settings.
        WhatIfConfig config;
        config.batches = 2;
        auto paci = predictRun(config, "paci");
        auto flush = predictRun(config, "1f1b");
        QVERIFY(paci && flush);
        const ComparisonModel* model = compare->model();
        QCOMPARE(model->runs().size(), std::size_t(2));
        const auto raw = [&](Metric m, int col) {
            return model->index(static_cast<int>(m), col).data(ComparisonModel::RawValueRole).toDouble();
        };
        QCOMPARE(raw(Metric::BubbleFraction, 0), paci->result.report.bubbleFraction);
        QCOMPARE(raw(Metric::BubbleFraction, 1), flush->result.report.bubbleFraction);
        QCOMPARE(raw(Metric::Throughput, 0), paci->result.throughputSamplesPerSecond);
        QCOMPARE(raw(Metric::Makespan, 1), static_cast<double>(flush->result.report.makespan));
        QVERIFY(raw(Metric::BubbleFraction, 0) < raw(Metric::BubbleFraction, 1)); // PACI removes the flush
        // Charts show the first run's report.
        const auto& stage0 = paci->result.report.perStage.at(0);
        double idle = 0;
        for (auto t : stage0.idleByCause) {
            idle += static_cast<double>(t);
        }
        const double expected = 100.0 * idle / static_cast<double>(paci->result.report.makespan);
        QVERIFY(qAbs(window.bubbleChart()->stagePercent(0) - expected) < 1e-6);
        QVERIFY(qAbs(window.memoryChart()->stageMiB(0) - stage0.peakMemoryBytes / (1024.0 * 1024.0)) < 1e-6);
    }

    void sliderSwitchesToPrediction()
    {
        MainWindow window(false);
        window.resize(1400, 900);
        window.show();
        QSignalSpy predicted(window.engine(), &PredictionEngine::predicted);
        window.tuning()->accumSlider()->setValue(4);
        QVERIFY(predicted.wait(5000));
        const auto p = predicted.last().at(0).value<PredictionPtr>();
        QCOMPARE(window.compare()->timeline(0)->index(), p->primary.index.get());
        QCOMPARE(window.compare()->model()->runs().at(0).label, std::string("PACI"));
    }

    void exportsWriteReadableFiles()
    {
        WhatIfConfig config;
        config.accum = 16;
        const auto json = QJsonDocument::fromJson(configToJson(config)).object();
        QCOMPARE(json.value(QStringLiteral("schedule")).toObject().value(QStringLiteral("accum")).toInt(), 16);
        QCOMPARE(json.value(QStringLiteral("global_batch")).toInt(), 128);
        config.memoryBudgetBytes = 512LL << 20;
        const auto back = configFromJson(configToJson(config));
        QVERIFY(back.has_value());
        QVERIFY(*back == config);
        QVERIFY(!configFromJson("not json").has_value());

        auto run = predictRun(config, "paci");
        QVERIFY(run);
        const auto trace = QJsonDocument::fromJson(
                               traceToChromeJson({{QStringLiteral("paci"), run->result.trace.get()}}))
                               .object()
                               .value(QStringLiteral("traceEvents"))
                               .toArray();
        QCOMPARE(static_cast<std::size_t>(trace.size()), run->result.trace->size() + 1); // + process name
        QCOMPARE(trace.at(1).toObject().value(QStringLiteral("ph")).toString(), QStringLiteral("X"));
        QVERIFY(trace.at(1).toObject().value(QStringLiteral("name")).toString().startsWith(QStringLiteral("PP:")));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
