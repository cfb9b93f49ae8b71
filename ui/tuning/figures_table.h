#pragma once
// The tuning panel's figures box: one run's throughput, bubble, peak memory and drift bound as a
// small HTML table, each figure as the run knows it ("—" where it does not: an imported job has
// no throughput and no memory figures).

#include "ui/tuning/what_if.h"

#include <QString>

namespace bs::ui {

/// The table for `prediction.primary`; memory marked "over budget" against config.memoryBudgetBytes.
QString figuresTable(const Prediction& prediction);

} // namespace bs::ui
