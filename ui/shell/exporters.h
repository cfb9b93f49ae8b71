#pragma once
// What the window writes to disk: the tuned configuration, traces in Chrome/Perfetto JSON, and
// panels as PNG. Returns false with a user-readable message on failure.
// TODO(gui): switch the config to TOML (runtime/config) and the trace writer to profiler/io once
// the config branch lands on main, so the GUI, CLI and cluster jobs share one format (#4).

#include "profiler/trace/trace_store.h"
#include "ui/tuning/what_if.h"

#include <QString>

#include <optional>

class QWidget;

namespace bs::ui {

/// JSON with the ScheduleParams fields (name, stages, microbatches, accum, batches, extra_depth)
/// plus model, device, micro_batch_size and memory_budget_bytes.
QByteArray configToJson(const WhatIfConfig& config);
bool exportConfig(const WhatIfConfig& config, const QString& path, QString* error);
/// Reads what configToJson() wrote; missing fields keep their defaults; nullopt if not JSON.
std::optional<WhatIfConfig> configFromJson(const QByteArray& json);

/// Chrome trace events ("ph":"X", ts/dur in µs, pid = run, tid = stage, name "PP:<stage><kind><mb>").
QByteArray traceToChromeJson(const std::vector<std::pair<QString, const profiler::TraceSnapshot*>>& runs);
bool exportTraces(const std::vector<std::pair<QString, const profiler::TraceSnapshot*>>& runs, const QString& path,
                  QString* error);

/// Saves widget->grab() as PNG.
bool exportPng(QWidget* widget, const QString& path, QString* error);

} // namespace bs::ui
