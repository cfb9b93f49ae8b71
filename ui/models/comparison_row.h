#pragma once
// The figures the comparison table shows for one run, taken from its analysis report. Pure C++.

#include "profiler/analysis/report.h"
#include "runtime/plan/common/stage_drift.h"

#include <cstdint>
#include <string>

namespace bs::ui {

struct ComparisonRow
{
    std::string label;
    double bubbleFraction = 0; ///< report.bubbleFraction
    double steadyBubbleFraction = 0; ///< report.steadyBubbleFraction; -1 = no steady window (under three batches)
    double throughput = 0; ///< sequences per second (virtual or wall)
    profiler::TimeNs makespan = 0; ///< ns
    std::int64_t peakMemoryBytes = 0; ///< largest stage
    int maxVersionLag = 0; ///< largest stage
    int lagBound = -1; ///< drift bound in updates; -1 = not applicable
    /// Virtual seconds until the run's validation loss first reached the target (timeToTarget(), the
    /// runtime's time_to_target_s); -1 = no target, no validation loss or not reached.
    double timeToTargetS = -1;
    /// v: stages (model chunks) per rank, and their placement ("loop", "v"; empty = one per rank).
    /// Peak memory is then per rank, over all the stages it holds.
    int stagesPerRank = 1;
    std::string placement;
    /// Weight drift measured on the run's own tensors, per model stage (chunk, with its rank) and
    /// over the run (runtime::runDrift of its StageMetrics). Not measured (no samples) for simulated
    /// and predicted runs: the cost model has no tensors, so the table shows "—" there.
    runtime::RunDrift drift;
    /// PredictedRun::throughputKnown / memoryKnown: false shows "—" (an imported job).
    bool throughputKnown = true;
    bool memoryKnown = true;

    static ComparisonRow fromReport(std::string label, const profiler::Report& report, double throughput, int lagBound);
};

} // namespace bs::ui
