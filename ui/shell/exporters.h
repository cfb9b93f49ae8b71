#pragma once
// What the window writes to disk: the tuned configuration in any of the engine's export formats
// (TOML, torchrun, SLURM, PyTorch CSV, Megatron, DeepSpeed, torchtitan: runtime/plan/export), traces as
// Chrome/Perfetto JSON (profiler/io), and panels as PNG or SVG. Failures come back as user-readable text.

#include "profiler/trace/trace_store.h"
#include "ui/tuning/what_if.h"

#include <QString>
#include <QStringList>

#include <optional>

class QWidget;

namespace bs::ui {

/// One file-dialog filter per export format, e.g. "toml — the run configuration (*.toml)".
QStringList configExportFilters();
/// The format name of a filter returned by configExportFilters() (empty when unknown).
QString formatOfFilter(const QString& filter);
/// Writes `config` in `format` to `path` (atomically). False with `error` set on failure.
bool exportConfig(const WhatIfConfig& config, const QString& format, const QString& path, QString* error);
/// Writes `config` in every format into the folder `dir` (runtime::exportAll: launch.sh, job.sbatch,
/// ds_config.json, ...). True with `report` set to what was written, skipped and changed, one line
/// each; false with `error` set.
bool exportAllFormats(const runtime::RunConfig& config, const QString& dir, QString* report, QString* error);
/// Writes a whole run configuration (a selected run's config.toml with tuned settings).
bool exportRunConfig(const runtime::RunConfig& config, const QString& format, const QString& path, QString* error);
/// The TOML text of `config` (also what QSettings keeps).
QString configToToml(const WhatIfConfig& config);
/// Parses TOML written by configToToml() or any valid config.toml; nullopt with `error` set if invalid.
std::optional<WhatIfConfig> configFromToml(const QString& toml, QString* error = nullptr);

/// Writes `trace` as Chrome/Perfetto JSON.
bool exportTrace(const profiler::TraceSnapshot& trace, const QString& path, QString* error);

/// Saves `widget` as PNG rendered at `scale` × its on-screen size (default 2: print quality).
bool exportPng(QWidget* widget, const QString& path, QString* error, double scale = 2.0);
/// Renders `widget` as vector SVG (QSvgGenerator: charts stay lines and text, not pixels).
bool exportSvg(QWidget* widget, const QString& path, QString* error);

} // namespace bs::ui
