#include "ui/shell/exporters.h"

#include "base/atomic_file.h"
#include "profiler/io/chrome_trace.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/config/config_validate.h"
#include "runtime/plan/export/export.h"
#include "ui/common/format.h"

#include <QBuffer>
#include <QFileInfo>
#include <QObject>
#include <QPainter>
#include <QPixmap>
#include <QSvgGenerator>
#include <QWidget>

#include <algorithm>

namespace bs::ui {

QStringList configExportFilters()
{
    QStringList filters;
    for (const auto& f : runtime::exportFormats()) {
        const auto dot = f.suggestedFileName.rfind('.');
        const std::string pattern =
            dot == std::string::npos ? f.suggestedFileName : "*" + f.suggestedFileName.substr(dot);
        filters << toQt(f.name) + QStringLiteral(" — ") + toQt(f.summary) + QStringLiteral(" (") + toQt(pattern)
                + QStringLiteral(")");
    }
    return filters;
}

QString formatOfFilter(const QString& filter)
{
    for (const auto& f : runtime::exportFormats()) {
        if (filter.startsWith(toQt(f.name) + QStringLiteral(" — "))) {
            return toQt(f.name);
        }
    }
    return {};
}

bool exportConfig(const WhatIfConfig& config, const QString& format, const QString& path, QString* error)
{
    return exportRunConfig(toExportConfig(config), format, path, error);
}

bool exportRunConfig(const runtime::RunConfig& config, const QString& format, const QString& path, QString* error)
{
    auto text = runtime::exportConfig(config, fromQt(format));
    if (!text) {
        if (error) {
            *error = toQt(text.error().describe());
        }
        return false;
    }
    const Status written = writeFileAtomic(fromQt(path), *text);
    if (!written && error) {
        *error = toQt(written.error().describe());
    }
    return written.has_value();
}

bool exportAllFormats(const runtime::RunConfig& config, const QString& dir, QString* report, QString* error)
{
    auto all = runtime::exportAll(config, fromQt(dir));
    if (!all) {
        if (error) {
            *error = toQt(all.error().describe());
        }
        return false;
    }
    if (report) {
        QStringList lines;
        for (const auto& f : all->written) {
            lines << QObject::tr("wrote %1 (%2)").arg(toQt(f.path), toQt(f.format));
        }
        for (const std::string& skipped : all->skipped) {
            lines << QObject::tr("skipped %1").arg(toQt(skipped));
        }
        for (const std::string& note : all->notes) {
            lines << QObject::tr("note: %1").arg(toQt(note));
        }
        *report = lines.join(QLatin1Char('\n'));
    }
    return true;
}

QString configToToml(const WhatIfConfig& config)
{
    return toQt(runtime::toToml(toExportConfig(config)));
}

std::optional<WhatIfConfig> configFromToml(const QString& toml, QString* error)
{
    const std::string text = fromQt(toml);
    auto parsed = runtime::parseRunConfig(text, "settings");
    const Status valid = parsed ? runtime::validate(*parsed) : Status(parsed.error());
    if (!valid) {
        if (error) {
            *error = toQt(valid.error().describe());
        }
        return std::nullopt;
    }
    return fromRunConfig(*parsed);
}

bool exportTrace(const profiler::TraceSnapshot& trace, const QString& path, QString* error)
{
    const Status written = writeFileAtomic(
        fromQt(path), [&trace](std::ostream& out) { return profiler::writeChromeTrace(out, trace); });
    if (!written && error) {
        *error = toQt(written.error().describe());
    }
    return written.has_value();
}

namespace {

// Images are encoded in memory and written through the atomic writer like every other file: an
// interrupted export never leaves a half-written PNG or SVG where a good one was.
bool writeImage(const QByteArray& bytes, const QString& path, QString* error)
{
    const Status written = writeFileAtomic(fromQt(path), std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    if (!written && error) {
        *error = toQt(written.error().describe());
    }
    return written.has_value();
}

} // namespace

bool exportPng(QWidget* widget, const QString& path, QString* error, double scale)
{
    // Rendered at `scale` × the on-screen size (device pixel ratio), so exported figures stay
    // sharp in a paper or on a high-DPI screen; encoded in memory, then written atomically.
    scale = std::max(1.0, scale);
    QPixmap pixmap(widget->size() * scale);
    pixmap.setDevicePixelRatio(scale);
    pixmap.fill(widget->palette().color(QPalette::Window));
    widget->render(&pixmap, QPoint(), QRegion(), QWidget::DrawChildren | QWidget::DrawWindowBackground);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    if (pixmap.isNull() || !buffer.open(QIODevice::WriteOnly) || !pixmap.save(&buffer, "PNG")) {
        if (error) {
            *error = QObject::tr("cannot save %1").arg(path);
        }
        return false;
    }
    buffer.close();
    return writeImage(bytes, path, error);
}

bool exportSvg(QWidget* widget, const QString& path, QString* error)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(widget->size());
    svg.setViewBox(QRect(QPoint(0, 0), widget->size()));
    svg.setTitle(widget->objectName().isEmpty() ? QFileInfo(path).baseName() : widget->objectName());
    svg.setDescription(QObject::tr("Bubblescope panel"));
    QPainter painter;
    if (widget->size().isEmpty() || !buffer.open(QIODevice::WriteOnly) || !painter.begin(&svg)) {
        if (error) {
            *error = QObject::tr("cannot write %1").arg(path);
        }
        return false;
    }
    widget->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    painter.end();
    buffer.close();
    if (bytes.isEmpty()) {
        if (error) {
            *error = QObject::tr("cannot write %1").arg(path);
        }
        return false;
    }
    return writeImage(bytes, path, error);
}

} // namespace bs::ui
