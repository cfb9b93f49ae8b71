// How an imported job is put together from its ranks' recovered actions (job_assembly_p.h).

#include "profiler/import/job_assembly_p.h"

#include <algorithm>
#include <climits>
#include <deque>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace bs::profiler::kineto {

namespace {

using Key = std::tuple<int, int, int, int>; // src stage, dst stage, direction, global micro-batch

struct PendingOp
{
    int rank;
    const CommOp* op;
};

/// The torch.distributed.pipelining class whose order and placement these ranks show (see
/// ImportedJob::pytorchSchedule). `rankStages[r]`: rank r's stages, ascending.
std::string pytorchScheduleOf(const std::vector<std::vector<RecoveredAction>>& actions,
    const std::vector<std::vector<int>>& rankStages, int stages, bool allForwardsFirst)
{
    const int p = static_cast<int>(rankStages.size());
    bool split = false, multi = false;
    for (int r = 0; r < p; ++r) {
        multi = multi || rankStages[static_cast<std::size_t>(r)].size() > 1;
        for (const auto& a : actions[static_cast<std::size_t>(r)]) {
            split = split || a.kind == EventKind::BackwardInput || a.kind == EventKind::BackwardWeight;
        }
    }
    if (!multi) {
        return split ? std::string() : allForwardsFirst ? "ScheduleGPipe" : "Schedule1F1B";
    }
    // Loop: rank r holds r, r + p, r + 2p, ...; V: rank r holds r and 2p - 1 - r.
    bool loop = p > 0 && stages % p == 0, vShape = stages == 2 * p;
    for (int r = 0; r < p; ++r) {
        const auto& mine = rankStages[static_cast<std::size_t>(r)];
        std::vector<int> looped;
        for (int s = r; s < stages; s += p) {
            looped.push_back(s);
        }
        loop = loop && mine == looped;
        vShape = vShape && mine == std::vector<int>{r, 2 * p - 1 - r};
    }
    if (loop) {
        if (split) {
            return "ScheduleInterleavedZeroBubble";
        }
        // Looped BFS: every forward before any backward, and each stage's forwards before the next's.
        bool bfs = true;
        for (const auto& rank : actions) {
            int lastStage = -1;
            bool sawBackward = false;
            for (const auto& a : rank) {
                if (a.kind == EventKind::Forward) {
                    bfs = bfs && !sawBackward && a.stage >= lastStage;
                    lastStage = a.stage;
                } else if (a.kind != EventKind::Update) {
                    sawBackward = true;
                }
            }
        }
        return bfs ? "ScheduleLoopedBFS" : "ScheduleInterleaved1F1B";
    }
    return vShape && split ? "ScheduleZBVZeroBubble" : std::string();
}

} // namespace

/// The stage and micro-batch numbers a rank's labels name, against the bounds (kineto_trace.h),
/// before anything is sized by them; and the steps x micro-batches the global numbering needs.
Status checkLabelNumbers(const RankActions& rank, const std::string& file)
{
    auto refuse = [&](const std::string& what, std::int64_t got, std::int64_t high) {
        return Status(makeError(ErrorCode::ParseError,
            "a label names " + what + " " + std::to_string(got) + "; allowed: 0.." + std::to_string(high), file));
    };
    std::int64_t updates = 0;
    for (const auto& a : rank.actions) {
        if (a.kind == EventKind::Update) {
            ++updates;
            continue;
        }
        if (a.stage < 0 || a.stage >= kMaxStages) {
            return refuse("stage", a.stage, kMaxStages - 1);
        }
        if (a.microbatch >= kMaxMicrobatches) {
            return refuse("micro-batch", a.microbatch, kMaxMicrobatches - 1);
        }
    }
    for (const auto& c : rank.comms) {
        for (const int stage : {c.stage, c.peerStage}) {
            if (stage >= kMaxStages) {
                return refuse("stage", stage, kMaxStages - 1);
            }
        }
        if (c.microbatch >= kMaxMicrobatches) {
            return refuse("micro-batch", c.microbatch, kMaxMicrobatches - 1);
        }
    }
    // Micro-batches are numbered on across steps (step x m + id): keep that inside an int.
    if ((updates + 1) * kMaxMicrobatches > INT32_MAX) {
        return makeError(ErrorCode::ParseError,
            std::to_string(updates) + " optimizer steps in one trace; allowed: at most "
                + std::to_string(INT32_MAX / kMaxMicrobatches - 1),
            file);
    }
    return ok();
}

/// Numbers, transfers, clocks and the snapshot of a job whose ranks' actions are recovered
/// (`job` holds the rank summaries). A profile of several steps numbers micro-batches on.
Result<ImportedJob> assembleJob(
    ImportedJob job, std::vector<RankActions> recovered, const std::vector<const RankTrace*>& rankTrace)
{
    const int p = static_cast<int>(recovered.size());
    int maxStage = 0, maxMb = 0;
    for (const auto& r : recovered) {
        for (const auto& a : r.actions) {
            if (a.kind != EventKind::Update) {
                maxStage = std::max(maxStage, a.stage);
                maxMb = std::max(maxMb, a.microbatch);
            }
        }
    }
    job.stages = maxStage + 1;
    job.microbatches = maxMb + 1;
    job.rankOfStage.assign(static_cast<std::size_t>(job.stages), -1);
    for (int r = 0; r < p; ++r) {
        for (int s : recovered[static_cast<std::size_t>(r)].stages) {
            job.rankOfStage[static_cast<std::size_t>(s)] = r;
        }
    }
    for (auto& r : recovered) {
        std::vector<TimeNs> updateEnds; // the step of an action: updates that ended before it
        for (const auto& a : r.actions) {
            if (a.kind == EventKind::Update) {
                updateEnds.push_back(a.end);
            }
        }
        std::sort(updateEnds.begin(), updateEnds.end());
        auto globalMb = [&](TimeNs at, int mb) {
            const auto step = std::upper_bound(updateEnds.begin(), updateEnds.end(), at) - updateEnds.begin();
            return static_cast<int>(step) * job.microbatches + mb;
        };
        for (auto& a : r.actions) {
            if (a.kind != EventKind::Update) {
                a.microbatch = globalMb(a.start, a.microbatch);
            }
        }
        for (auto& c : r.comms) {
            c.microbatch = globalMb(c.posted, c.microbatch);
        }
    }

    // Match every send with its receive by (from, to, direction, micro-batch), in order.
    std::map<Key, std::deque<PendingOp>> sends, recvs;
    for (int r = 0; r < p; ++r) {
        for (const CommOp& c : recovered[static_cast<std::size_t>(r)].comms) {
            const int src = c.isSend ? c.stage : c.peerStage;
            const int dst = c.isSend ? c.peerStage : c.stage;
            (c.isSend ? sends : recvs)[Key{src, dst, static_cast<int>(c.direction), c.microbatch}].push_back({r, &c});
        }
    }
    struct Pair
    {
        PendingOp send, recv;
    };
    std::vector<Pair> pairs;
    for (auto& [key, queue] : sends) {
        auto it = recvs.find(key);
        while (!queue.empty() && it != recvs.end() && !it->second.empty()) {
            pairs.push_back({queue.front(), it->second.front()});
            queue.pop_front();
            it->second.pop_front();
        }
        job.unmatchedComms += queue.size();
    }
    for (const auto& [key, queue] : recvs) {
        job.unmatchedComms += queue.size();
    }

    // Clock alignment. Timestamps are the ranks' own clocks (one clock when they share a host);
    // a receive that completes before its send was posted proves a skew. Along the pipeline,
    // rank r+1 is shifted by the NTP-style midpoint of the smallest forward and backward delays
    // when (and only when) such a violation is seen.
    std::vector<TimeNs> shift(static_cast<std::size_t>(p), 0), uncertainty(static_cast<std::size_t>(p), 0);
    for (int r = 0; r + 1 < p; ++r) {
        const auto ur = static_cast<std::size_t>(r);
        std::optional<TimeNs> down, up; // min(arrival − send posted) r→r+1 and r+1→r
        for (const Pair& pr : pairs) {
            if (pr.send.rank == r && pr.recv.rank == r + 1) {
                const TimeNs d = (pr.recv.op->completed + shift[ur + 1]) - (pr.send.op->posted + shift[ur]);
                down = down ? std::min(*down, d) : d;
            } else if (pr.send.rank == r + 1 && pr.recv.rank == r) {
                const TimeNs d = (pr.recv.op->completed + shift[ur]) - (pr.send.op->posted + shift[ur + 1]);
                up = up ? std::min(*up, d) : d;
            }
        }
        const bool violated = (down && *down < 0) || (up && *up < 0);
        if (violated) {
            // down = delay + θ, up = delay − θ: θ is how far rank r+1's clock runs ahead.
            const TimeNs theta = down && up ? (*down - *up) / 2 : (down ? *down : -*up);
            shift[ur + 1] -= theta;
            // down and up, corrected, are the fastest true hops plus and minus the residual error.
            uncertainty[ur + 1] = down && up ? (*down + *up) / 2 : 0;
        }
        // Later ranks inherit the shift of the rank they are compared with.
        if (r + 2 < p) {
            shift[ur + 2] = shift[ur + 1];
        }
    }
    TimeNs origin = INT64_MAX;
    for (int r = 0; r < p; ++r) {
        job.ranks[static_cast<std::size_t>(r)].clockShift = shift[static_cast<std::size_t>(r)];
        job.ranks[static_cast<std::size_t>(r)].clockUncertainty = uncertainty[static_cast<std::size_t>(r)];
        for (const auto& a : recovered[static_cast<std::size_t>(r)].actions) {
            origin = std::min(origin, a.start + shift[static_cast<std::size_t>(r)]);
        }
    }
    job.origin = origin;
    for (const Pair& pr : pairs) {
        const CommOp& s = *pr.send.op;
        const CommOp& rv = *pr.recv.op;
        Transfer t;
        t.srcRank = pr.send.rank;
        t.dstRank = pr.recv.rank;
        t.srcStage = s.stage;
        t.dstStage = rv.stage;
        t.microbatch = s.microbatch;
        t.direction = s.direction;
        t.sendPosted = s.posted + shift[static_cast<std::size_t>(t.srcRank)] - origin;
        t.recvPosted = rv.posted + shift[static_cast<std::size_t>(t.dstRank)] - origin;
        t.arrived = rv.completed + shift[static_cast<std::size_t>(t.dstRank)] - origin;
        t.bytes = std::max(s.bytes, rv.bytes);
        const CommOp& withInfo = s.comm >= 0 ? s : rv;
        const RankTrace& holder = *rankTrace[static_cast<std::size_t>(s.comm >= 0 ? t.srcRank : t.dstRank)];
        if (withInfo.comm >= 0 && static_cast<std::size_t>(withInfo.comm) < holder.comms.size()) {
            t.comm = static_cast<std::int32_t>(job.comms.size());
            job.comms.push_back(holder.comms[static_cast<std::size_t>(withInfo.comm)]);
        }
        job.transfers.push_back(t);
    }
    std::sort(job.transfers.begin(), job.transfers.end(),
        [](const Transfer& a, const Transfer& b) { return a.sendPosted < b.sendPosted; });

    // The trace in the profiler's vocabulary.
    TraceMeta meta;
    meta.stages = job.stages;
    meta.clock = "wall";
    std::vector<TraceEvent> events;
    bool allForwardsFirst = true;
    for (int r = 0; r < p; ++r) {
        const auto ur = static_cast<std::size_t>(r);
        auto& actions = recovered[ur].actions;
        // Time in c10d calls between consecutive actions (own clock, before the shift). A receive
        // call that only waited for its data does not delay the next action in a replay either:
        // that action starts at max(end + calls, arrival), and the arrival is at least as late.
        std::vector<std::pair<TimeNs, TimeNs>> calls;
        for (const CommOp& c : recovered[ur].comms) {
            if (!c.onGpu && c.returned > c.posted) {
                calls.push_back({c.posted, c.returned});
            }
        }
        std::sort(calls.begin(), calls.end());
        for (std::size_t i = 0; i < actions.size(); ++i) {
            const TimeNs from = actions[i].end;
            const TimeNs to = i + 1 < actions.size() ? actions[i + 1].start : INT64_MAX;
            auto it = std::lower_bound(calls.begin(), calls.end(), std::make_pair(from, TimeNs{INT64_MIN}));
            for (; it != calls.end() && it->first < to; ++it) {
                actions[i].commOpsAfter += std::max<TimeNs>(0, std::min(it->second, to) - it->first);
            }
        }
        int version = 0;
        bool sawBackward = false;
        for (auto& a : actions) {
            a.start += shift[ur] - origin;
            a.end += shift[ur] - origin;
            TraceEvent e;
            e.start = a.start;
            e.end = std::max(a.start, a.end);
            e.kind = a.kind;
            e.lane = Lane::Compute;
            e.microbatch = a.microbatch;
            e.version = version;
            if (a.kind == EventKind::Update) {
                e.stage = static_cast<std::uint16_t>(recovered[ur].stages.front());
                e.aux = static_cast<std::uint16_t>(std::min(job.microbatches, 65535));
                ++version;
                sawBackward = false; // the next step starts
            } else {
                e.stage = static_cast<std::uint16_t>(a.stage);
                sawBackward = sawBackward || a.kind != EventKind::Forward;
                if (a.kind == EventKind::Forward && sawBackward && a.microbatch % job.microbatches != 0) {
                    allForwardsFirst = false;
                }
            }
            events.push_back(e);
        }
        job.actions.push_back(actions);
        meta.attributes["rank." + std::to_string(r) + ".file"] = job.ranks[ur].file;
        std::string stages;
        for (int s : recovered[ur].stages) {
            stages += (stages.empty() ? "" : ",") + std::to_string(s);
        }
        meta.attributes["rank." + std::to_string(r) + ".stages"] = stages;
    }
    // The producing action of each transfer (the forward or backward whose output it carries).
    std::map<std::tuple<int, int, int>, TimeNs> producedAt; // stage, kind, mb -> end
    for (const auto& actions : job.actions) {
        for (const auto& a : actions) {
            if (a.kind != EventKind::Update) {
                const int kind = a.kind == EventKind::Forward ? 0 : 1;
                producedAt[{a.stage, kind, a.microbatch}] = a.end;
            }
        }
    }
    for (Transfer& t : job.transfers) {
        const int kind = t.direction == Direction::Activation ? 0 : 1;
        if (auto it = producedAt.find({t.srcStage, kind, t.microbatch}); it != producedAt.end()) {
            t.producerEnd = it->second;
        }
    }
    for (const Transfer& t : job.transfers) {
        TraceEvent e;
        e.kind = EventKind::Send;
        e.lane = Lane::Comm;
        e.stage = static_cast<std::uint16_t>(t.srcStage);
        e.aux = static_cast<std::uint16_t>(t.dstStage);
        e.microbatch = t.microbatch;
        e.start = std::max(t.sendPosted, t.recvPosted);
        e.end = std::max(e.start, t.arrived);
        e.bytes = t.bytes;
        events.push_back(e);
    }
    std::vector<std::vector<int>> rankStages;
    for (const auto& r : recovered) {
        rankStages.push_back(r.stages);
    }
    job.pytorchSchedule = pytorchScheduleOf(job.actions, rankStages, job.stages, allForwardsFirst);
    const std::string schedule = job.pytorchSchedule.empty() ? "unknown schedule" : job.pytorchSchedule;
    meta.attributes["source"] = "kineto";
    meta.attributes["schedule"] = schedule;
    meta.attributes["microbatches"] = std::to_string(job.microbatches);
    meta.attributes["pipeline_group"] = job.pipelineGroup;
    meta.title = "imported " + schedule + " p=" + std::to_string(job.stages) + " m=" + std::to_string(job.microbatches);
    job.trace = makeSnapshot(std::move(meta), events);
    return job;
}

/// A profile of several `ProfilerStep#N` ranges (torch.profiler's schedule): each step that every
/// rank recorded, imported on its own from the actions and transfers that started inside it.
Status importProfilerSteps(
    ImportedJob& whole, const std::vector<RankActions>& recovered, const std::vector<const RankTrace*>& rankTrace)
{
    std::map<int, int> ranksWith; // step number -> ranks that recorded it
    for (const auto& r : recovered) {
        for (const auto& step : r.profilerSteps) {
            ++ranksWith[step.number];
        }
    }
    std::vector<int> numbers;
    for (const auto& [number, ranks] : ranksWith) {
        if (ranks == static_cast<int>(recovered.size())) {
            numbers.push_back(number);
        }
    }
    if (numbers.size() < 2) {
        return ok(); // one step (or none marked): the whole trace is the step
    }
    for (const int number : numbers) {
        std::vector<RankActions> part(recovered.size());
        ImportedJob header;
        header.ranks = whole.ranks;
        header.pipelineGroup = whole.pipelineGroup;
        header.backend = whole.backend;
        header.warnings = whole.warnings;
        bool empty = false;
        for (std::size_t r = 0; r < recovered.size(); ++r) {
            const auto& steps = recovered[r].profilerSteps;
            const auto range = *std::find_if(
                steps.begin(), steps.end(), [&](const ProfilerStepRange& x) { return x.number == number; });
            RankActions& mine = part[r];
            mine.source = recovered[r].source;
            mine.gpu = recovered[r].gpu;
            auto inside = [&](TimeNs t) { return range.start <= t && t < range.end; };
            std::copy_if(recovered[r].actions.begin(), recovered[r].actions.end(), std::back_inserter(mine.actions),
                [&](const RecoveredAction& a) { return inside(a.start); });
            std::copy_if(recovered[r].comms.begin(), recovered[r].comms.end(), std::back_inserter(mine.comms),
                [&](const CommOp& c) { return inside(c.posted); });
            std::set<int> stages;
            for (const auto& a : mine.actions) {
                if (a.kind != EventKind::Update) {
                    stages.insert(a.stage);
                }
            }
            mine.stages.assign(stages.begin(), stages.end());
            header.ranks[r].stages = mine.stages;
            header.ranks[r].actions = mine.actions.size();
            empty = empty || mine.stages.empty();
        }
        if (empty) {
            whole.warnings.push_back("ProfilerStep#" + std::to_string(number)
                + " has no pipeline action on some rank: left out of the per-step figures");
            continue;
        }
        Result<ImportedJob> step = assembleJob(std::move(header), std::move(part), rankTrace);
        if (!step) {
            return step.error();
        }
        step->profilerStep = number;
        whole.steps.push_back(std::move(*step));
    }
    return ok();
}

} // namespace bs::profiler::kineto
