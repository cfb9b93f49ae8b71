#include "app/cli/imported_what_if.h"

#include "profiler/analysis/analyze.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/executor.h"
#include "runtime/plan/sim/measured_costs.h"
#include "runtime/plan/sim/scheduler_core.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace bs::cli {

Result<runtime::ScheduleParams> replayParamsOf(const profiler::kineto::ImportedJob& job)
{
    if (job.pytorchSchedule.empty()) {
        return makeError(ErrorCode::Unavailable,
            "the job's order and placement match no torch.distributed.pipelining schedule",
            std::to_string(job.ranks.size()) + " ranks, " + std::to_string(job.stages) + " stages");
    }
    return runtime::paramsForPyTorchSchedule(job.pytorchSchedule, static_cast<int>(job.ranks.size()),
        profiler::kineto::stagesPerRankOf(job), std::max(1, job.microbatches));
}

namespace {

/// measuredCostsOfImportedJob(), with the ranks' c10d call time in F/B (I, W) or without.
Result<runtime::MeasuredCosts> importedCosts(const profiler::kineto::ImportedJob& job, bool withCalls)
{
    // The fixtures profile the job's last step, after warm-up steps: no start-up in the trace.
    auto measured = runtime::measuredCosts(*job.trace, job.stages, runtime::FirstActions::Steady);
    if (!measured) {
        return measured.error();
    }
    using profiler::EventKind;
    // The c10d calls after each action: charged to its stage's occupancy (mean per stage and kind).
    std::map<std::pair<int, int>, std::pair<TimeNs, std::int64_t>> callSums; // stage, kind -> sum, count
    for (const auto& actions : job.actions) {
        for (const auto& a : actions) {
            if (a.kind == EventKind::Update || a.stage < 0 || a.stage >= measured->stageCount()) {
                continue;
            }
            auto& [sum, count] = callSums[{a.stage, static_cast<int>(a.kind)}];
            sum += a.commOpsAfter;
            ++count;
        }
    }
    for (const auto& [key, sum] : withCalls ? callSums : decltype(callSums){}) {
        runtime::StageCost& cost = measured->stages[static_cast<std::size_t>(key.first)];
        const TimeNs mean = sum.first / std::max<std::int64_t>(1, sum.second);
        switch (static_cast<EventKind>(key.second)) {
        case EventKind::Forward:
            cost.forward += mean;
            break;
        case EventKind::Backward: // a full backward costs I + W: its calls follow the I half
        case EventKind::BackwardInput:
            cost.backwardInput += mean;
            break;
        case EventKind::BackwardWeight:
            cost.backwardWeight += mean;
            break;
        default:
            break;
        }
    }
    // A hop's time before its receiver posted the receive is the receiver being busy, which the
    // simulator models itself: comm is what is left, from the moment the data existed and the
    // receiver waited for it, to its arrival.
    std::vector<TimeNs> hops;
    for (const auto& t : job.transfers) {
        if (t.hopDelay() >= 0) {
            hops.push_back(std::max<TimeNs>(0, t.arrived - std::max(t.producerEnd, t.recvPosted)));
        }
    }
    if (!hops.empty()) {
        std::nth_element(hops.begin(), hops.begin() + static_cast<std::ptrdiff_t>(hops.size() / 2), hops.end());
        measured->comm = hops[hops.size() / 2];
        measured->commMeasured = true;
    }
    return measured;
}

} // namespace

Result<runtime::MeasuredCosts> measuredCostsOfImportedJob(const profiler::kineto::ImportedJob& job)
{
    return importedCosts(profiler::kineto::medianStep(job), true); // several profiled steps: the median one
}

namespace {

/// `measured` (one cost per stage of the job) folded into one cost per rank: a rank's stages summed.
runtime::MeasuredCosts perRank(const profiler::kineto::ImportedJob& job, runtime::MeasuredCosts measured)
{
    std::vector<runtime::StageCost> ranks(job.ranks.size());
    for (std::size_t s = 0; s < measured.stages.size() && s < job.rankOfStage.size(); ++s) {
        const auto r = static_cast<std::size_t>(job.rankOfStage[s]);
        if (r < ranks.size()) {
            ranks[r].forward += measured.stages[s].forward;
            ranks[r].backwardInput += measured.stages[s].backwardInput;
            ranks[r].backwardWeight += measured.stages[s].backwardWeight;
            ranks[r].update += measured.stages[s].update;
            ranks[r].cold.forward += measured.stages[s].cold.forward; // the first actions' one-time extras
            ranks[r].cold.backwardInput += measured.stages[s].cold.backwardInput;
            ranks[r].cold.backwardWeight += measured.stages[s].cold.backwardWeight;
            ranks[r].cold.update += measured.stages[s].cold.update;
        }
    }
    measured.stages = std::move(ranks);
    measured.computeEvents.assign(measured.stages.size(), 0);
    return measured;
}

double share(TimeNs part, TimeNs whole)
{
    return whole > 0 ? std::min(1.0, static_cast<double>(part) / static_cast<double>(whole)) : 1.0;
}

/// `result`'s trace with each F/B/I/W cut back to its compute (the c10d call time the costs
/// charged it trimmed off, in the proportion `compute` / `occupied` of its cost entry), analysed as
/// the simulator does: the predicted bubble then means what the measured one means.
profiler::Report computeOnlyReport(const runtime::SimulationResult& result, const runtime::SimulationRequest& request,
    const runtime::MeasuredCosts& occupied, const runtime::MeasuredCosts& compute)
{
    const runtime::Schedule& schedule = result.schedule;
    std::vector<std::vector<int>> stageOf(static_cast<std::size_t>(schedule.ranks()));
    for (int s = 0; s < schedule.stages(); ++s) {
        stageOf[static_cast<std::size_t>(schedule.rankOf(s))].push_back(s);
    }
    const bool perStage = occupied.stages.size() == static_cast<std::size_t>(schedule.stages());
    std::vector<profiler::TraceEvent> events = result.trace->toVector();
    for (auto& e : events) {
        if (!e.isCompute() || e.stage >= stageOf.size()) {
            continue;
        }
        const auto& mine = stageOf[e.stage];
        std::size_t entry = e.stage; // one cost per rank
        if (perStage) {
            entry = static_cast<std::size_t>(schedule.onePerRank() || e.aux >= mine.size() ? e.stage : mine[e.aux]);
        }
        if (entry >= occupied.stages.size() || entry >= compute.stages.size()) {
            continue;
        }
        const runtime::StageCost& o = occupied.stages[entry];
        const runtime::StageCost& c = compute.stages[entry];
        double keep = 1.0;
        switch (e.kind) {
        case profiler::EventKind::Forward:
            keep = share(c.forward, o.forward);
            break;
        case profiler::EventKind::Backward:
            keep = share(c.backwardInput + c.backwardWeight, o.backwardInput + o.backwardWeight);
            break;
        case profiler::EventKind::BackwardInput:
            keep = share(c.backwardInput, o.backwardInput);
            break;
        case profiler::EventKind::BackwardWeight:
            keep = share(c.backwardWeight, o.backwardWeight);
            break;
        default:
            break;
        }
        e.end = e.start + static_cast<TimeNs>(std::llround(static_cast<double>(e.duration()) * keep));
    }
    return profiler::analyze(
        *profiler::makeSnapshot(result.trace->meta(), events), runtime::analysisOptionsFor(schedule, &request.costs));
}

} // namespace

Result<WhatIf> predictFromImportedJob(const profiler::kineto::ImportedJob& job, std::string schedule, int microbatches)
{
    auto measured = importedCosts(job, true);
    auto compute = importedCosts(job, false);
    if (!measured || !compute) {
        return measured ? compute.error() : measured.error();
    }
    runtime::SimulationRequest request;
    if (schedule.empty()) {
        auto own = replayParamsOf(job);
        if (!own) {
            return own.error();
        }
        request.schedule = *own;
    } else {
        const runtime::ScheduleInfo* info = runtime::findSchedule(schedule);
        if (!info) {
            return runtime::makeSchedule({.name = schedule}).error(); // the catalogue's message: names the allowed ones
        }
        request.schedule.name = schedule;
        request.schedule.stages = static_cast<int>(job.ranks.size());
        if (request.schedule.stages * info->stagesPerRank(0) != job.stages) {
            *measured = perRank(job, std::move(measured).value());
            *compute = perRank(job, std::move(compute).value());
        }
    }
    const bool ownM = microbatches <= 0 || microbatches == job.microbatches;
    request.schedule.microbatches = microbatches > 0 ? microbatches : std::max(1, job.microbatches);
    request.schedule.batches = 1;
    request.costs = runtime::withMeasuredTimes(runtime::CostModel{}, *measured);
    auto result = runtime::simulate(request);
    if (!result) {
        return result.error();
    }
    WhatIf out;
    out.schedule = request.schedule.name;
    out.microbatches = request.schedule.microbatches;
    out.predictedStep = result->report.makespan;
    const profiler::Report busy = computeOnlyReport(*result, request, *measured, *compute);
    out.predictedBubble = busy.bubbleFraction;
    out.predictedBusy = busy.stages * busy.makespan - busy.totalIdle;
    auto own = replayParamsOf(job);
    out.own = ownM && own && own->name == out.schedule;
    return out;
}

namespace {

using Key = std::tuple<int, int, int>; // stage, kind, micro-batch (Update: its index)

std::string name(const Key& k) // "1F3", as PyTorch writes actions
{
    return std::to_string(std::get<0>(k)) + profiler::eventLetter(static_cast<profiler::EventKind>(std::get<1>(k)))
        + std::to_string(std::get<2>(k));
}

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

    /// The measured compute of a replayed action of `stage` (its event is trimmed to this).
    TimeNs compute(int stage, const profiler::TraceEvent& e) const
    {
        auto it = m_compute.find({stage, static_cast<int>(e.kind), e.microbatch});
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

/// Whether each rank's program (compute actions, first step) is the order recovered from its trace.
bool sameOrder(const profiler::kineto::ImportedJob& job, const runtime::Schedule& schedule, std::string& difference)
{
    if (static_cast<std::size_t>(schedule.ranks()) != job.actions.size()) {
        difference = "the schedule has " + std::to_string(schedule.ranks()) + " ranks, the job "
            + std::to_string(job.actions.size());
        return false;
    }
    for (std::size_t r = 0; r < job.actions.size(); ++r) {
        std::vector<Key> recovered;
        for (const auto& a : job.actions[r]) {
            if (a.kind != profiler::EventKind::Update) {
                recovered.push_back({a.stage, static_cast<int>(a.kind), a.microbatch});
            }
        }
        std::size_t i = 0;
        for (const runtime::Action& a : schedule.programs[r]) {
            if (a.kind == runtime::ActionKind::Update) {
                continue;
            }
            const Key generated{a.stage, static_cast<int>(runtime::toEventKind(a.kind)), a.microbatch};
            if (i >= recovered.size() || recovered[i] != generated) {
                difference = "rank " + std::to_string(r) + ", action " + std::to_string(i) + ": the trace has "
                    + (i < recovered.size() ? name(recovered[i]) : std::string("nothing")) + ", the schedule "
                    + name(generated);
                return false;
            }
            ++i;
        }
    }
    return true;
}

} // namespace

Result<Replay> replayImportedJob(const profiler::kineto::ImportedJob& job)
{
    auto params = replayParamsOf(job);
    if (!params) {
        return params.error();
    }
    params->batches = 1;
    auto schedule = runtime::makeSchedule(*params);
    if (!schedule) {
        return schedule.error();
    }
    Replay out;
    out.schedule = params->name;
    out.orderMatches = sameOrder(job, *schedule, out.difference);
    ReplayExecutor executor(job);
    profiler::TraceStore store(runtime::traceMetaFor(*schedule));
    auto driven = runtime::drive(*schedule, executor, store);
    if (!driven) {
        return driven.error();
    }
    // Busy is compute only, as in the measured trace: the time in c10d calls stays idle. The
    // replay draws one lane per rank (event.stage = rank, aux = which of its stages).
    std::vector<std::vector<int>> stageOf(static_cast<std::size_t>(schedule->ranks()));
    for (int s = 0; s < schedule->stages(); ++s) {
        stageOf[static_cast<std::size_t>(schedule->rankOf(s))].push_back(s);
    }
    std::vector<profiler::TraceEvent> events = store.snapshot()->toVector();
    for (auto& e : events) {
        if (e.isCompute() && e.kind != profiler::EventKind::Marker && e.kind != profiler::EventKind::Update) {
            const auto& mine = stageOf[e.stage];
            const int stage = schedule->onePerRank() ? e.stage : mine.at(e.aux);
            e.end = e.start + std::min(e.duration(), executor.compute(stage, e));
        }
    }
    profiler::AnalysisOptions options;
    options.microbatchesPerBatch = job.microbatches;
    options.synchronous = true;
    out.report = profiler::analyze(*profiler::makeSnapshot(store.snapshot()->meta(), events), options);
    return out;
}

} // namespace bs::cli
