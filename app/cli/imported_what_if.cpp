#include "app/cli/imported_what_if.h"

#include "profiler/analysis/analyze.h"
#include "runtime/schedule/catalogue.h"
#include "runtime/sim/executor.h"
#include "runtime/sim/measured_costs.h"
#include "runtime/sim/scheduler_core.h"

#include <map>
#include <tuple>

namespace bs::cli {

Result<runtime::MeasuredCosts> measuredCostsOfImportedJob(const profiler::kineto::ImportedJob& job)
{
    auto measured = runtime::measuredCosts(*job.trace, job.stages);
    if (!measured) {
        return measured.error();
    }
    // The scheduler core's comm time runs from the producer's end to the arrival, so calibrate it
    // with exactly that (it holds the sender's overheads and rendezvous waits the transfer alone
    // does not): the mean over matched transfers.
    TimeNs hops = 0;
    std::int64_t count = 0;
    for (const auto& t : job.transfers) {
        if (t.hopDelay() >= 0) {
            hops += t.hopDelay();
            ++count;
        }
    }
    if (count > 0) {
        measured->comm = hops / count;
        measured->commMeasured = true;
    }
    return measured;
}

Result<WhatIf> predictFromImportedJob(const profiler::kineto::ImportedJob& job, std::string schedule, int microbatches)
{
    auto measured = measuredCostsOfImportedJob(job);
    if (!measured) {
        return measured.error();
    }
    if (schedule.empty()) {
        schedule = profiler::kineto::replayScheduleOf(job);
    }
    runtime::SimulationRequest request;
    request.schedule.name = schedule;
    request.schedule.stages = job.stages;
    request.schedule.microbatches = microbatches > 0 ? microbatches : job.microbatches;
    request.schedule.batches = 1;
    request.costs = runtime::withMeasuredTimes(runtime::CostModel{}, *measured);
    auto result = runtime::simulate(request);
    if (!result) {
        return result.error();
    }
    WhatIf out;
    out.schedule = schedule;
    out.microbatches = request.schedule.microbatches;
    out.predictedStep = result->report.makespan;
    out.predictedBubble = result->report.bubbleFraction;
    return out;
}

namespace {

using Key = std::tuple<int, int, int>; // stage, kind, micro-batch (Update: its index)

/// Answers each action with its measured duration and each transfer with its measured hop delay.
/// The scheduler core asks commTime() right after performing the producer, so the last action
/// performed names the transfer.
class ReplayExecutor final : public runtime::ActionExecutor
{
public:
    explicit ReplayExecutor(const profiler::kineto::ImportedJob& job)
    {
        for (const auto& actions : job.actions) {
            for (const auto& a : actions) {
                const Key key{a.stage, static_cast<int>(a.kind), a.microbatch};
                m_compute[key] = a.end - a.start;
                m_calls[key] = a.commOpsAfter;
            }
        }
        for (const auto& t : job.transfers) {
            const auto kind = t.direction == profiler::kineto::Direction::Activation ? profiler::EventKind::Forward
                                                                                      : profiler::EventKind::Backward;
            const Key key{t.srcStage, static_cast<int>(kind), t.microbatch};
            if (t.hopDelay() >= 0) {
                // The producer's replayed duration already holds the rank's c10d calls after it.
                auto calls = m_calls.find(key);
                m_hop[key] = std::max<TimeNs>(0, t.hopDelay() - (calls != m_calls.end() ? calls->second : 0));
            }
        }
    }

    Result<runtime::ActionOutcome> perform(const runtime::Action& action) override
    {
        const auto kind = runtime::toEventKind(action.kind);
        m_last = {action.stage, static_cast<int>(kind), action.microbatch};
        if (kind == profiler::EventKind::Update) {
            auto it = m_compute.find(m_last); // a rank that ran no optimizer step: 0
            return runtime::ActionOutcome{it != m_compute.end() ? it->second : 0, 0, 0};
        }
        auto it = m_compute.find(m_last);
        if (it == m_compute.end()) {
            return makeError(ErrorCode::InvalidArgument, "the imported job has no measured duration for this action",
                             "stage " + std::to_string(action.stage) + " micro-batch " + std::to_string(action.microbatch));
        }
        // The stage is occupied for the compute and for the sends/receives its thread then
        // issues (on Gloo these block the caller); compute() tells the two apart afterwards.
        auto calls = m_calls.find(m_last);
        return runtime::ActionOutcome{it->second + (calls != m_calls.end() ? calls->second : 0), 0, 1};
    }

    /// The measured compute of a replayed action (its event is trimmed to this).
    TimeNs compute(const profiler::TraceEvent& e) const
    {
        auto it = m_compute.find({e.stage, static_cast<int>(e.kind), e.microbatch});
        return it != m_compute.end() ? it->second : e.duration();
    }

    TimeNs commTime(int, int, std::int64_t) const override
    {
        auto it = m_hop.find(m_last);
        return it == m_hop.end() ? 0 : it->second;
    }

private:
    std::map<Key, TimeNs> m_compute, m_calls, m_hop;
    Key m_last{};
};

} // namespace

Result<profiler::Report> replayImportedJob(const profiler::kineto::ImportedJob& job)
{
    const runtime::ScheduleInfo* info = runtime::findSchedule(job.schedule);
    if (!info || info->multiStage()) {
        return makeError(ErrorCode::Unavailable, "replay needs one stage per rank (gpipe or 1f1b); this job is " + job.schedule);
    }
    runtime::ScheduleParams params;
    params.name = job.schedule;
    params.stages = job.stages;
    params.microbatches = job.microbatches;
    params.batches = 1;
    auto schedule = runtime::makeSchedule(params);
    if (!schedule) {
        return schedule.error();
    }
    ReplayExecutor executor(job);
    profiler::TraceStore store(runtime::traceMetaFor(*schedule));
    auto driven = runtime::drive(*schedule, executor, store);
    if (!driven) {
        return driven.error();
    }
    // Busy is compute only, as in the measured trace: the time in c10d calls stays idle.
    std::vector<profiler::TraceEvent> events = store.snapshot()->toVector();
    for (auto& e : events) {
        if (e.isCompute() && e.kind != profiler::EventKind::Marker) {
            e.end = e.start + std::min(e.duration(), executor.compute(e));
        }
    }
    profiler::AnalysisOptions options;
    options.microbatchesPerBatch = job.microbatches;
    options.synchronous = true;
    return profiler::analyze(*profiler::makeSnapshot(store.snapshot()->meta(), events), options);
}

} // namespace bs::cli
