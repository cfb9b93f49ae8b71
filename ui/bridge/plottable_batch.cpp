#include "ui/bridge/run_backend.h"

#include <cmath>

namespace bs::ui {

std::optional<runtime::BatchMetrics> plottableBatch(const runtime::BatchMetrics& batch)
{
    if (!std::isfinite(batch.trainLoss)) {
        return std::nullopt;
    }
    runtime::BatchMetrics kept = batch;
    if (kept.valLoss && !std::isfinite(*kept.valLoss)) {
        kept.valLoss.reset();
    }
    return kept;
}

} // namespace bs::ui
