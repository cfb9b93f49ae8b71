#include "laptop_fixtures.h"

#include "base/atomic_file.h"
#include "profiler/trace/trace_store.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/rundir/run_metrics.h"
#include "ui/common/format.h"
#include "ui/shell/exporters.h"
#include "ui/tuning/what_if.h"

#include <QChart>
#include <QDir>
#include <QFile>
#include <QFontMetrics>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QRegularExpression>
#include <QValueAxis>

#include <nlohmann/json.hpp>

namespace bs::ui::test {

void useOffscreenScreen(QSize size)
{
    const QString config = QDir::temp().filePath(QStringLiteral("bubblescope-screen-%1x%2-%3.json")
                                                     .arg(size.width())
                                                     .arg(size.height())
                                                     .arg(QCoreApplication::applicationPid()));
    QFile file(config);
    if (file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        file.write(QStringLiteral("{\"screens\": [{\"name\": \"laptop\", \"x\": 0, \"y\": 0, \"width\": %1, "
                                  "\"height\": %2, \"logicalDpi\": 96, \"logicalBaseDpi\": 96, \"dpr\": 1}]}")
                       .arg(size.width())
                       .arg(size.height())
                       .toUtf8());
    }
    qputenv("QT_QPA_PLATFORM", QByteArray("offscreen:configfile=") + config.toUtf8());
}

bool writeRunDir(const QString& dir, const std::string& schedule, int stages, bool stripRanks)
{
    if (!QDir().mkpath(dir)) {
        return false;
    }
    WhatIfConfig c;
    c.run.schedule.name = schedule;
    c.run.pipeline.stages = stages;
    c.run.pipeline.microbatches = 8;
    c.run.pipeline.accum = 0;
    c.run.pipeline.microBatchSize = 2;
    c.baseline.clear();
    c.batches = 2;
    auto rc = toRunConfig(c);
    rc.training.steps = c.batches;
    auto run = predictRun(c, schedule);
    if (!run) {
        qWarning("%s", run.error().describe().c_str());
        return false;
    }
    if (!bs::writeFileAtomic(fromQt(dir + QStringLiteral("/config.toml")), runtime::toToml(rc))) {
        return false;
    }
    auto trace = run->result.trace;
    if (stripRanks) {
        profiler::TraceMeta meta = trace->meta();
        meta.attributes.erase("stages_per_rank");
        meta.attributes.erase("placement");
        std::vector<profiler::TraceEvent> events;
        trace->forEach([&events](const profiler::TraceEvent& e) { events.push_back(e); });
        trace = profiler::makeSnapshot(std::move(meta), events);
    }
    QString error;
    if (!exportTrace(*trace, dir + QStringLiteral("/trace.json"), &error)) {
        qWarning("%s", qPrintable(error));
        return false;
    }
    std::string metrics;
    for (int step = 0; step < c.batches; ++step) {
        runtime::BatchMetrics b;
        b.step = step;
        b.trainLoss = 5.0 - step;
        b.valLoss = 5.2 - step;
        b.virtualTimeS = 0.6 * (step + 1);
        b.tokensPerSVirtual = 1000.0 + 10 * step;
        for (int s = 0; s < c.run.pipeline.stages; ++s) {
            runtime::StageMetrics m;
            m.stage = s;
            m.driftSamples = 4;
            m.meanDrift = 1e-3 * (step + 1);
            m.maxDrift = 2e-3 * (step + 1);
            b.stages.push_back(m);
        }
        metrics += nlohmann::json(b).dump() + "\n";
    }
    return static_cast<bool>(bs::writeFileAtomic(fromQt(dir + QStringLiteral("/metrics.jsonl")), metrics));
}

/// Each value axis's tick labels (as Qt formats them) differ and fit the space between ticks.
/// `v` as Qt Charts prints it with a "%.Nf…" or "%.Ne" label format.
QString formatted(const QString& format, double v)
{
    static const QRegularExpression spec(QStringLiteral("^%\\.(\\d+)([fe])(.*)$"));
    const auto m = spec.match(format);
    if (!m.hasMatch()) {
        return QString::number(v);
    }
    return QString::number(v, m.captured(2).at(0).toLatin1(), m.captured(1).toInt()) + m.captured(3);
}

void checkValueAxis(const QValueAxis* axis, const QChart* chart, const QString& where)
{
    if (!axis->isVisible() || !axis->labelsVisible()) {
        return;
    }
    const QFontMetrics fm(axis->labelsFont());
    QStringList labels;
    const int n = axis->tickCount();
    for (int i = 0; i < n; ++i) {
        const double v = axis->min() + (axis->max() - axis->min()) * i / std::max(1, n - 1);
        labels << formatted(axis->labelFormat(), v);
    }
    for (int i = 1; i < labels.size(); ++i) {
        QVERIFY2(labels[i] != labels[i - 1], qPrintable(where + QStringLiteral(": repeated tick ") + labels[i]));
    }
    const bool across = axis->orientation() == Qt::Horizontal;
    const double room = (across ? chart->plotArea().width() : chart->plotArea().height()) / std::max(1, n - 1);
    for (const QString& label : labels) {
        const int needed = across ? fm.horizontalAdvance(label) : fm.height();
        QVERIFY2(needed <= room + 1,
            qPrintable(where + QStringLiteral(": tick '%1' needs %2 px, has %3").arg(label).arg(needed).arg(room)));
    }
}

/// A chart's title, axes and legend: drawn whole, or the view's tooltip carries what is cut.
void checkChart(const QChartView* view, const QString& where)
{
    const QChart* chart = view->chart();
    QVERIFY(chart);
    const QFontMetrics title(chart->titleFont());
    const int titleRoom = static_cast<int>(chart->size().width()) - 16;
    if (title.horizontalAdvance(chart->title()) > titleRoom) {
        QVERIFY2(view->toolTip().contains(chart->title()),
            qPrintable(where + QStringLiteral(": title cut: ") + chart->title()));
    }
    for (QAbstractAxis* axis : chart->axes()) {
        if (auto* value = qobject_cast<QValueAxis*>(axis)) {
            checkValueAxis(value, chart, where);
        }
        if (axis->isVisible() && axis->isTitleVisible() && !axis->titleText().isEmpty()) {
            const QFontMetrics fm(axis->titleFont());
            const double length =
                axis->orientation() == Qt::Horizontal ? chart->plotArea().width() : chart->plotArea().height();
            QVERIFY2(fm.horizontalAdvance(axis->titleText()) <= length,
                qPrintable(where + QStringLiteral(": axis title cut: ") + axis->titleText()));
        }
    }
    if (chart->legend()->isVisible()) {
        const QFontMetrics fm(chart->legend()->font());
        int needed = 0;
        for (QLegendMarker* marker : chart->legend()->markers()) {
            needed += marker->isVisible() ? fm.horizontalAdvance(marker->label()) + 30 : 0;
        }
        QVERIFY2(needed <= chart->legend()->geometry().width() + 1,
            qPrintable(
                where + QStringLiteral(": legend cut (%1 > %2)").arg(needed).arg(chart->legend()->geometry().width())));
    }
}

/// A plain or rich-text label shows its text whole, or its tooltip says it.
void checkLabel(const QLabel* label, const QString& where)
{
    if (!label->isVisible() || label->text().isEmpty()) {
        return;
    }
    const bool whole = label->wordWrap() ? label->height() >= label->heightForWidth(label->width())
                                         : label->width() >= label->sizeHint().width();
    QVERIFY2(whole || !label->toolTip().isEmpty(), qPrintable(where + QStringLiteral(": label cut: ") + label->text()));
}

} // namespace bs::ui::test
