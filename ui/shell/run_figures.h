#pragma once
// Figures the main window shows for a run in several places (status lines, the comparison table).

#include "profiler/analysis/report.h"
#include "ui/models/comparison_row.h"
#include "ui/tuning/what_if.h"

#include <QString>

#include <cstdint>

namespace bs::ui {

/// Whose figures a row or a line shows.
enum class FiguresOf : std::uint8_t
{
    Measurement, ///< what the run measured over its batches
    Prediction, ///< a what-if or a simulated replay: throughput and steady bubble of the steady state
};

/// The comparison table's row of a predicted or measured run, named by the run's label (schedule,
/// a, b; an opened run's directory), so runs of one schedule at other settings read apart. A
/// prediction's throughput and steady bubble are its steady state's (PredictedRun::steady) and
/// its time to target the predicted one in seconds (where a run reached the target).
ComparisonRow summaryOf(const PredictedRun& run, const profiler::Report& report, FiguresOf figures);

/// "bubble 12.5 % · 840 seq/s · makespan 1.2 s".
QString figuresLine(const profiler::Report& report, double throughput);
/// A predicted run's line: "steady 870 seq/s, bubble 16.0 % · 4 batches shown: bubble 38.2 %,
/// makespan 1.2 s" (or "never steady" where no steady state was found).
QString predictedFiguresLine(const PredictedRun& run);

} // namespace bs::ui
