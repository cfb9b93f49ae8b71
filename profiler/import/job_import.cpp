#include "profiler/import/job_import.h"

#include "profiler/import/job_assembly_p.h"
#include "profiler/import/kineto_reader.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
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
        if (Status bounded = checkLabelNumbers(recovered[pr], t.file); !bounded) {
            return bounded.error();
        }
    }

    Result<ImportedJob> whole = assembleJob(job, recovered, rankTrace);
    if (!whole) {
        return whole.error();
    }
    warnAboutMissingRanks(*whole, order, groupSize, traces.front().worldSize);
    if (Status split = importProfilerSteps(*whole, recovered, rankTrace); !split) {
        return split.error();
    }
    return whole;
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

TimeNs stepTimeOf(const ImportedJob& job)
{
    TimeNs end = 0; // actions are relative to the origin, the earliest start
    for (const auto& rank : job.actions) {
        for (const auto& a : rank) {
            end = std::max(end, a.end);
        }
    }
    return end;
}

const ImportedJob& medianStep(const ImportedJob& job)
{
    if (job.steps.empty()) {
        return job;
    }
    std::vector<std::size_t> order(job.steps.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::sort(order.begin(), order.end(),
        [&](std::size_t a, std::size_t b) { return stepTimeOf(job.steps[a]) < stepTimeOf(job.steps[b]); });
    return job.steps[order[(order.size() - 1) / 2]];
}

int stagesPerRankOf(const ImportedJob& job)
{
    return job.ranks.empty() ? 1 : std::max(1, job.stages / static_cast<int>(job.ranks.size()));
}

} // namespace bs::profiler::kineto