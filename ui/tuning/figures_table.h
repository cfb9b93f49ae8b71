#pragma once
// The tuning panel's figures box: one run's figures as a small HTML table, each as the run knows
// it ("—" where it does not: an imported job has no throughput and no memory figures). A
// prediction leads with its time to target and gives the steady state's throughput and bubble
// (the few batches on the timeline carry a warm-up the steady state does not); a measurement
// gives what it measured, its steady bubble only where it ran long enough to have a steady window.

#include "ui/tuning/what_if.h"

#include <QString>

namespace bs::ui {

/// The table for `prediction.primary`, predicted (measured = false: a what-if or a simulated
/// replay) or measured; memory marked "over budget" against config.memoryBudgetBytes.
QString figuresTable(const Prediction& prediction, bool measured = false);

/// The predicted time to target of `run` in words: "41.2 s ± 3.1 s" where a run reached the
/// target (the model has E_min), else relative to `reference` ("0.74× 1F1B-flush") when it has
/// one; empty when neither.
QString timeToTargetText(const PredictedRun& run, const PredictedRun* reference);

} // namespace bs::ui
