#include "ui/bridge/run_backend.h"

#include <algorithm>

namespace bs::ui {

double samplesTrained(
    const runtime::RunConfig& first, const std::vector<RunUpdate::AppliedSettings>& applied, int steps)
{
    // A live Apply changes m and b from a global-batch boundary on: each batch counts the samples
    // of the settings it trained with, never the first settings' m·b for the whole run.
    double samples = 0;
    int from = 0;
    const runtime::RunConfig* inForce = &first;
    const auto add = [&](int until) {
        const int batches = std::clamp(until, from, std::max(from, steps)) - from;
        samples += static_cast<double>(batches) * inForce->pipeline.microbatches * inForce->pipeline.microBatchSize;
    };
    for (const RunUpdate::AppliedSettings& change : applied) {
        add(change.step);
        from = std::clamp(change.step, from, std::max(from, steps));
        inForce = &change.config;
    }
    add(steps);
    return samples;
}

} // namespace bs::ui
