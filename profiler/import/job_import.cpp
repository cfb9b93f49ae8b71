#include "profiler/import/job_import.h"

#include "profiler/import/kineto_reader.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <cctype>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace bs::profiler::kineto {

namespace fs = std::filesystem;

namespace {

bool looksLikeTrace(const fs::path& p)
{
    const std::string name = p.filename().string();
    auto endsWith = [&](std::string_view suffix) {
        return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    return endsWith(".json") || endsWith(".json.gz");
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

/// The pipeline group: one named like a pipeline group ("pp", "pipe"), else one whose ranks are
/// exactly the traces given, else the given ranks in order.
std::vector<int> pipelineOrder(const std::vector<RankTrace>& traces, std::string& groupName, std::size_t& groupSize)
{
    std::set<int> given;
    for (const auto& t : traces) {
        given.insert(t.rank);
    }
    const RankTrace& first = traces.front();
    const ProcessGroup* pick = nullptr;
    for (const auto& g : first.groups) {
        const bool containsAll = std::all_of(given.begin(), given.end(), [&](int r) {
            return std::find(g.ranks.begin(), g.ranks.end(), r) != g.ranks.end();
        });
        if (!containsAll) {
            continue;
        }
        const std::string desc = lower(g.desc + " " + g.name);
        const bool named = desc.find("pp") != std::string::npos || desc.find("pipe") != std::string::npos;
        const bool exact = std::set<int>(g.ranks.begin(), g.ranks.end()) == given;
        if (named || (exact && !pick)) {
            pick = &g;
            if (named) {
                break;
            }
        }
    }
    if (pick) {
        groupName = pick->desc.empty() ? pick->name : pick->desc;
        groupSize = pick->ranks.size();
        std::vector<int> order;
        for (int r : pick->ranks) {
            if (given.count(r)) {
                order.push_back(r);
            }
        }
        return order;
    }
    groupName = "(ranks given)";
    groupSize = 0; // no group names this pipeline
    return std::vector<int>(given.begin(), given.end());
}

// A job's traces can come without some of its ranks (one rank's file copied off a cluster): the
// import still works, but the timeline, the bubbles and the what-ifs then take the ranks given for
// the whole pipeline. Says so when the pipeline group has more ranks than were given, or, when
// no group names the pipeline, the job had more ranks and some transfers found no peer.
void warnAboutMissingRanks(ImportedJob& job, const std::vector<int>& given, std::size_t groupSize, int worldSize)
{
    std::string ranks;
    for (int r : given) {
        ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    }
    const std::string tail = ": the other ranks' stages are missing from the timeline, the bubbles and the what-ifs";
    if (groupSize > given.size()) {
        job.warnings.push_back("pipeline group " + job.pipelineGroup + " has " + std::to_string(groupSize)
            + " ranks, traces of " + std::to_string(given.size()) + " given (rank " + ranks + ")" + tail);
    } else if (groupSize == 0 && worldSize > static_cast<int>(given.size()) && job.unmatchedComms > 0) {
        job.warnings.push_back("the job ran on " + std::to_string(worldSize) + " ranks, traces of "
            + std::to_string(given.size()) + " given (rank " + ranks + "; " + std::to_string(job.unmatchedComms)
            + " sends or receives found no peer)" + tail);
    }
}

using Key = std::tuple<int, int, int, int>; // src stage, dst stage, direction, global micro-batch

struct PendingOp
{
    int rank;
    const CommOp* op;
};

} // namespace

Result<std::vector<std::string>> listRankTraces(const std::string& path)
{
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
        return makeError(ErrorCode::IoError, "no such file or directory", path);
    }
    if (fs::is_regular_file(status)) {
        return std::vector<std::string>{path};
    }
    if (!fs::is_directory(status)) {
        return makeError(ErrorCode::IoError, "not a regular file or a directory", path);
    }
    std::vector<std::string> files;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec) && looksLikeTrace(it->path())) {
            files.push_back(it->path().string());
        }
    }
    if (ec) {
        return makeError(ErrorCode::IoError, "cannot list the directory: " + ec.message(), path);
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        return makeError(ErrorCode::IoError, "no trace files (*.json, *.json.gz) in the directory", path);
    }
    return files;
}

namespace {

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

Result<ImportedJob> importJob(const std::vector<std::string>& paths)
{
    std::vector<std::string> files;
    std::vector<bool> fromFolder;
    for (const auto& p : paths) {
        auto listed = listRankTraces(p);
        if (!listed) {
            return listed.error();
        }
        const bool folder = listed->size() != 1 || listed->front() != p;
        files.insert(files.end(), listed->begin(), listed->end());
        fromFolder.insert(fromFolder.end(), listed->size(), folder);
    }
    if (files.empty()) {
        return makeError(ErrorCode::InvalidArgument, "no trace given");
    }
    // Ranks are read in parallel (one file per thread, at most one thread per core): each reader
    // streams its file and keeps only its compact events.
    std::vector<std::optional<Result<RankTrace>>> read(files.size());
    {
        const std::size_t workers = std::max<std::size_t>(1, std::min<std::size_t>(files.size(), std::thread::hardware_concurrency()));
        std::atomic<std::size_t> next{0};
        std::vector<std::thread> pool;
        auto work = [&] {
            for (std::size_t i = next++; i < files.size(); i = next++) {
                read[i].emplace(readKinetoTrace(files[i]));
            }
        };
        try {
            for (std::size_t w = 1; w < workers; ++w) {
                pool.emplace_back(work);
            }
        } catch (const std::system_error&) {
            // No more threads: the calling thread reads the rest.
        }
        work();
        for (auto& t : pool) {
            t.join();
        }
    }
    std::vector<RankTrace> traces;
    for (std::size_t i = 0; i < files.size(); ++i) {
        Result<RankTrace> trace = std::move(*read[i]);
        read[i].reset();
        if (!trace && fromFolder[i] && trace.error().code == ErrorCode::ParseError
            && trace.error().message.rfind(kNotATrace, 0) == 0) {
            continue; // well-formed JSON of another kind beside the traces (a config, a log)
        }
        if (!trace) {
            return trace.error();
        }
        if (trace->rank < 0) {
            trace->rank = static_cast<int>(traces.size()); // no distributedInfo: the order given
        }
        for (const auto& other : traces) {
            if (other.rank == trace->rank) {
                return makeError(ErrorCode::InvalidArgument, "two traces of rank " + std::to_string(trace->rank) + " (" + other.file + ")",
                                 files[i]);
            }
            if (other.worldSize != trace->worldSize) {
                return makeError(ErrorCode::InvalidArgument,
                                 "world size " + std::to_string(trace->worldSize) + " differs from " + other.file + "'s "
                                     + std::to_string(other.worldSize) + ": traces of different jobs",
                                 files[i]);
            }
        }
        traces.push_back(std::move(trace.value()));
    }
    if (traces.empty()) {
        return makeError(ErrorCode::ParseError, "none of the JSON files is a Kineto trace", paths.front());
    }

    ImportedJob job;
    job.backend = traces.front().backend;
    std::size_t groupSize = 0;
    const std::vector<int> order = pipelineOrder(traces, job.pipelineGroup, groupSize);
    const int p = static_cast<int>(order.size());
    std::vector<RankActions> recovered(static_cast<std::size_t>(p));
    std::vector<const RankTrace*> rankTrace(static_cast<std::size_t>(p), nullptr); // by pipeline rank
    job.ranks.resize(static_cast<std::size_t>(p));
    for (const RankTrace& t : traces) {
        const auto pr = static_cast<std::size_t>(std::find(order.begin(), order.end(), t.rank) - order.begin());
        recovered[pr] = recoverActions(t, static_cast<int>(pr));
        rankTrace[pr] = &t;
        RankSummary& s = job.ranks[pr];
        s.file = t.file;
        s.globalRank = t.rank;
        s.pipelineRank = static_cast<int>(pr);
        s.stages = recovered[pr].stages;
        s.source = recovered[pr].source;
        s.gpu = recovered[pr].gpu;
        s.events = t.events.size();
        s.actions = recovered[pr].actions.size();
        s.unlabelledComms = recovered[pr].unlabelledComms;
        if (s.stages.empty()) {
            return makeError(ErrorCode::ParseError,
                             "no pipeline action found (no PP: annotations, no Forward/Backward ranges, no autograd ops)", t.file);
        }
    }

    // Stages and micro-batches per step; a profile of several steps numbers micro-batches on.
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
    warnAboutMissingRanks(job, order, groupSize, traces.front().worldSize);
    return job;
}

} // namespace

Result<ImportedJob> importKinetoJob(const std::vector<std::string>& paths)
{
    // The reader rules: nothing escapes. Out of memory (or a library throwing) becomes an error
    // naming what was being imported.
    try {
        return importJob(paths);
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::IoError, "out of memory while importing the traces", paths.empty() ? "" : paths.front());
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, std::string("cannot import the traces: ") + e.what(), paths.empty() ? "" : paths.front());
    }
}

int stagesPerRankOf(const ImportedJob& job)
{
    return job.ranks.empty() ? 1 : std::max(1, job.stages / static_cast<int>(job.ranks.size()));
}

} // namespace bs::profiler::kineto
