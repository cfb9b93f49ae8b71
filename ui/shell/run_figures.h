#pragma once
// Figures the main window shows for a run in several places (status lines, the comparison table).

#include "profiler/analysis/report.h"
#include "ui/models/comparison_row.h"
#include "ui/tuning/what_if.h"

#include <QString>

namespace bs::ui {

/// The comparison table's row of a predicted or measured run, named by the run's label (schedule,
/// a, b; an opened run's directory), so runs of one schedule at other settings read apart.
ComparisonRow summaryOf(const PredictedRun& run, const profiler::Report& report);

/// "bubble 12.5 % · 840 seq/s · makespan 1.2 s".
QString figuresLine(const profiler::Report& report, double throughput);

} // namespace bs::ui
