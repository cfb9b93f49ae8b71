#include "ui/shell/exporters.h"

#include "ui/common/format.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPixmap>
#include <QSaveFile>
#include <QWidget>

namespace bs::ui {

namespace {

bool writeAtomically(const QString& path, const QByteArray& bytes, QString* error)
{
    QSaveFile file(path); // temp file + rename, like the run directory writers
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
        if (error) {
            *error = QObject::tr("cannot write %1: %2").arg(path, file.errorString());
        }
        return false;
    }
    return true;
}

} // namespace

QByteArray configToJson(const WhatIfConfig& c)
{
    QJsonObject schedule{
        {QStringLiteral("name"), toQt(c.schedule)},
        {QStringLiteral("stages"), c.stages},
        {QStringLiteral("microbatches"), c.accum},
        {QStringLiteral("accum"), c.accum},
        {QStringLiteral("batches"), c.batches},
        {QStringLiteral("extra_depth"), 0},
    };
    QJsonObject root{
        {QStringLiteral("schedule"), schedule},
        {QStringLiteral("model"), toQt(c.model)},
        {QStringLiteral("device"), toQt(c.device)},
        {QStringLiteral("micro_batch_size"), c.microBatchSize},
        {QStringLiteral("global_batch"), c.globalBatch()},
        {QStringLiteral("memory_budget_bytes"), static_cast<double>(c.memoryBudgetBytes)},
    };
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

std::optional<WhatIfConfig> configFromJson(const QByteArray& json)
{
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError || !doc.isObject()) {
        return std::nullopt;
    }
    const QJsonObject root = doc.object();
    const QJsonObject schedule = root.value(QStringLiteral("schedule")).toObject();
    WhatIfConfig c;
    c.schedule = fromQt(schedule.value(QStringLiteral("name")).toString(toQt(c.schedule)));
    c.stages = schedule.value(QStringLiteral("stages")).toInt(c.stages);
    c.accum = schedule.value(QStringLiteral("accum")).toInt(c.accum);
    c.batches = schedule.value(QStringLiteral("batches")).toInt(c.batches);
    c.model = fromQt(root.value(QStringLiteral("model")).toString(toQt(c.model)));
    c.device = fromQt(root.value(QStringLiteral("device")).toString(toQt(c.device)));
    c.microBatchSize = root.value(QStringLiteral("micro_batch_size")).toInt(c.microBatchSize);
    c.memoryBudgetBytes = static_cast<std::int64_t>(root.value(QStringLiteral("memory_budget_bytes")).toDouble(0));
    return c;
}

bool exportConfig(const WhatIfConfig& config, const QString& path, QString* error)
{
    return writeAtomically(path, configToJson(config), error);
}

QByteArray traceToChromeJson(const std::vector<std::pair<QString, const profiler::TraceSnapshot*>>& runs)
{
    QJsonArray events;
    int pid = 0;
    for (const auto& [label, trace] : runs) {
        events.append(QJsonObject{{QStringLiteral("ph"), QStringLiteral("M")},
                                  {QStringLiteral("name"), QStringLiteral("process_name")},
                                  {QStringLiteral("pid"), pid},
                                  {QStringLiteral("args"), QJsonObject{{QStringLiteral("name"), label}}}});
        if (trace) {
            trace->forEach([&](const profiler::TraceEvent& e) {
                QString name = QStringLiteral("PP:") + QString::number(e.stage) + QLatin1Char(profiler::eventLetter(e.kind));
                if (e.kind != profiler::EventKind::Marker) {
                    name += QString::number(e.microbatch);
                }
                events.append(QJsonObject{
                    {QStringLiteral("name"), name},
                    {QStringLiteral("cat"), toQt(profiler::laneName(e.lane))},
                    {QStringLiteral("ph"), QStringLiteral("X")},
                    {QStringLiteral("pid"), pid},
                    {QStringLiteral("tid"), static_cast<int>(e.stage) * 4 + static_cast<int>(e.lane)},
                    {QStringLiteral("ts"), static_cast<double>(e.start) / 1000.0},
                    {QStringLiteral("dur"), static_cast<double>(e.duration()) / 1000.0},
                    {QStringLiteral("args"), QJsonObject{{QStringLiteral("version"), e.version},
                                                         {QStringLiteral("bytes"), static_cast<double>(e.bytes)}}},
                });
            });
        }
        ++pid;
    }
    return QJsonDocument(QJsonObject{{QStringLiteral("traceEvents"), events},
                                     {QStringLiteral("displayTimeUnit"), QStringLiteral("ms")}})
        .toJson(QJsonDocument::Compact);
}

bool exportTraces(const std::vector<std::pair<QString, const profiler::TraceSnapshot*>>& runs, const QString& path,
                  QString* error)
{
    return writeAtomically(path, traceToChromeJson(runs), error);
}

bool exportPng(QWidget* widget, const QString& path, QString* error)
{
    const QPixmap pixmap = widget->grab();
    if (pixmap.isNull() || !pixmap.save(path, "PNG")) {
        if (error) {
            *error = QObject::tr("cannot save %1").arg(path);
        }
        return false;
    }
    return true;
}

} // namespace bs::ui
