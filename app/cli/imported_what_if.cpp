#include "app/cli/imported_what_if.h"

#include "profiler/analysis/analyze.h"
#include "runtime/schedule/catalogue.h"
#include "runtime/sim/executor.h"
#include "runtime/sim/measured_costs.h"
#include "runtime/sim/scheduler_core.h"

#include <map>
#include <tuple>

namespace bs::cli {

Result<WhatIf> predictFromImportedJob(const profiler::kineto::ImportedJob& job, std::string schedule, int microbatches)
{
    auto measured = runtime::measuredCosts(*job.trace, job.stages);
    if (!measured) {
        return measured.error();
    }
    if (schedule.empty()) {
        schedule = job.schedule == "gpipe" ? "gpipe" : "1f1b";
    }
    runtime::SimulationRequest request;
    request.schedule.name = schedule;
    request.schedule.stages = job.stages;
    request.schedule.microbatches = microbatches > 0 ? microbatches : job.microbatches;
    request.schedule.batches = 1;
    request.costs = runtime::withMeasuredTimes(runtime::CostModel{}, *measured);
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
        request.costs.commLatency = hops / count;
    }
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
                m_duration[{a.stage, static_cast<int>(a.kind), a.microbatch}] = a.end - a.start;
            }
        }
        for (const auto& t : job.transfers) {
            const auto kind = t.direction == profiler::kineto::Direction::Activation ? profiler::EventKind::Forward
                                                                                      : profiler::EventKind::Backward;
            if (t.hopDelay() >= 0) {
                m_hop[{t.srcStage, static_cast<int>(kind), t.microbatch}] = t.hopDelay();
            }
        }
    }

    Result<runtime::ActionOutcome> perform(const runtime::Action& action) override
    {
        const auto kind = runtime::toEventKind(action.kind);
        m_last = {action.stage, static_cast<int>(kind), action.microbatch};
        if (kind == profiler::EventKind::Update) {
            auto it = m_duration.find(m_last); // a rank that ran no optimizer step: 0
            return runtime::ActionOutcome{it != m_duration.end() ? it->second : 0, 0, 0};
        }
        auto it = m_duration.find(m_last);
        if (it == m_duration.end()) {
            return makeError(ErrorCode::InvalidArgument, "the imported job has no measured duration for this action",
                             "stage " + std::to_string(action.stage) + " micro-batch " + std::to_string(action.microbatch));
        }
        return runtime::ActionOutcome{it->second, 0, 1};
    }

    TimeNs commTime(int, int, std::int64_t) const override
    {
        auto it = m_hop.find(m_last);
        return it == m_hop.end() ? 0 : it->second;
    }

private:
    std::map<Key, TimeNs> m_duration, m_hop;
    Key m_last{};
};

} // namespace

Result<profiler::Report> replayImportedJob(const profiler::kineto::ImportedJob& job)
{
    if (job.schedule != "gpipe" && job.schedule != "1f1b") {
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
    profiler::AnalysisOptions options;
    options.microbatchesPerBatch = job.microbatches;
    options.synchronous = true;
    return profiler::analyze(*store.snapshot(), options);
}

} // namespace bs::cli
