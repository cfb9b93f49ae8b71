#pragma once
// simulate(): generate a schedule, run it through the scheduler core with the cost-model
// executor, analyse the trace. Pure, deterministic and fast (the GUI calls it under a slider).

#include "profiler/analysis/report.h"
#include "profiler/trace/trace_store.h"
#include "runtime/plan/schedule/schedule.h"
#include "runtime/plan/sim/cost_model.h"

#include <memory>

namespace bs::runtime {

struct SimulationRequest
{
    ScheduleParams schedule;
    CostModel costs; ///< one entry per stage, or a single entry used for every stage
    int microBatchSize = 1; ///< sequences per micro-batch, for throughput
    /// Only the report and the throughput are wanted (tables, comparisons, the tuner). A long
    /// run's figures then come from its steady state (steady_state.h), and the result's schedule
    /// programs and trace are those of the short run they were extended from (its
    /// schedule.params.batches says N), and its Report::bubbles is empty (the idle spans, which
    /// only a timeline reads). False: the schedule, trace and spans of all N batches.
    bool figuresOnly = false;
};

struct SimulationResult
{
    Schedule schedule;
    std::shared_ptr<const profiler::TraceSnapshot> trace;
    profiler::Report report;
    double throughputSamplesPerSecond = 0; ///< sequences per virtual second
    /// figuresOnly runs whose figures came from the steady state: what one more batch adds to the
    /// makespan (checked on three short runs, steady_state.h) and the short run's batches K. 0
    /// where the run was simulated plainly (too short to settle, or it did not).
    profiler::TimeNs steadyBatchPeriodNs = 0;
    /// ... and the idle time it adds over all lanes: the steady bubble is this over lanes × period.
    profiler::TimeNs steadyBatchIdleNs = 0;
    int settledAtBatches = 0;
};

Result<SimulationResult> simulate(const SimulationRequest& request);

/// Runs an existing schedule (e.g. one read from CSV) under `costs`.
Result<SimulationResult> simulateSchedule(Schedule schedule, CostModel costs, int microBatchSize = 1);

/// Trace metadata (title, schedule attributes) for a run of `schedule`.
profiler::TraceMeta traceMetaFor(const Schedule& schedule);

/// The one place analysis options are built from a run's settings: micro-batches per batch, flush
/// and weight stashing (from `schedule`), the memory model (from `costs`; none = micro-batch
/// units: activation 1, no static bytes) and the settings each live Apply put in force.
profiler::AnalysisOptions analysisOptionsFor(const Schedule& schedule, const CostModel* costs = nullptr,
    std::vector<profiler::AnalysisOptions::Segment> laterSettings = {});

} // namespace bs::runtime
