#pragma once
// A run's per-batch metrics as the runtime records them, with a measured gradient noise scale:
// what the tests of time to target feed Suggest and the what-if (written to a run directory, or
// held in memory as a live run's).

#include "runtime/plan/common/noise_scale.h"
#include "runtime/plan/rundir/run_metrics.h"

#include <vector>

namespace bs::test {

/// Six global batches: noise scales near `bNoise` from step 1 on (none at step 0: no update has
/// finished), validation loss 2.0 at step 3, training loss falling.
inline std::vector<runtime::BatchMetrics> metricsWithNoise(double bNoise)
{
    const double spread[] = {1.0, 1.05, 0.95, 1.0, 1.02, 0.98};
    std::vector<runtime::BatchMetrics> metrics;
    for (int step = 0; step < 6; ++step) {
        runtime::BatchMetrics m;
        m.step = step;
        m.trainLoss = 4.0 - 0.3 * step;
        if (step == 3) {
            m.valLoss = 2.0;
        }
        if (step > 0) {
            const double b = bNoise * spread[step];
            m.noise = runtime::combineStages({runtime::StageNoiseScale{0, 1.0, b, b, 4.0, 16.0, step}});
        }
        metrics.push_back(m);
    }
    return metrics;
}

} // namespace bs::test
