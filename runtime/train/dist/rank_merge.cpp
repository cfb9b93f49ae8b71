#include "runtime/train/dist/rank_merge.h"

#include "profiler/analysis/analyze.h"
#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/plan/rundir/run_dir_writer.h"
#include "runtime/plan/rundir/run_metrics.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/simulator.h"
#include "runtime/train/dist/dist_env.h"

#include <algorithm>
#include <limits>

namespace bs::runtime {

namespace fs = std::filesystem;
using profiler::TimeNs;

std::vector<int> rankOfStages(const RunConfig& config)
{
    const ScheduleInfo* info = findSchedule(config.schedule.name);
    const int p = config.pipeline.stages;
    return rankOfStageFor(info ? info->placement : Placement::OnePerRank, p, stagesPerRankOf(config));
}

nlohmann::json ownStages(const RunConfig& config, int rank, const nlohmann::json& perStage)
{
    const std::vector<int> rankOf = rankOfStages(config);
    nlohmann::json own = nlohmann::json::array();
    for (std::size_t s = 0; s < rankOf.size(); ++s) {
        if (rankOf[s] != rank) {
            continue;
        }
        own.push_back(perStage.is_array() && perStage.size() > s ? perStage[s] : nlohmann::json{{"stage", s}});
    }
    return own;
}

nlohmann::json mergeNoise(const std::vector<nlohmann::json>& rankEstimates, int stages)
{
    std::vector<StageNoiseScale> all;
    for (const nlohmann::json& e : rankEstimates) {
        if (!e.is_object()) {
            return nullptr; // a rank without an estimate yet: no model's figure
        }
        try {
            for (const StageNoiseScale& s : e.get<NoiseScaleEstimate>().stages) {
                all.push_back(s);
            }
        } catch (const nlohmann::json::exception&) {
            return nullptr;
        }
    }
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.stage < b.stage; });
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (all[i].stage != static_cast<int>(i)) {
            return nullptr;
        }
    }
    if (static_cast<int>(all.size()) != stages) {
        return nullptr;
    }
    return combineStages(std::move(all));
}

MergedRun mergeRankParts(
    const RunConfig& config, nlohmann::json base, std::vector<RankPart> parts, const MergeLabels& labels)
{
    const int p = static_cast<int>(parts.size());
    MergedRun run;
    for (RankPart& part : parts) {
        run.events.insert(run.events.end(), part.events.begin(), part.events.end());
    }
    std::sort(run.events.begin(), run.events.end(),
        [](const profiler::TraceEvent& a, const profiler::TraceEvent& b) { return a.start < b.start; });
    const TimeNs first = run.events.empty() ? 0 : run.events.front().start;
    TimeNs makespan = 0;
    for (profiler::TraceEvent& e : run.events) { // the timeline starts at the first action
        e.start -= first;
        e.end -= first;
        makespan = std::max(makespan, e.end);
    }
    nlohmann::json& merged = run.summary = std::move(base);
    const std::vector<int> rankOf = rankOfStages(config);
    merged["per_stage"] = nlohmann::json::array();
    std::vector<std::size_t> next(parts.size(), 0); // each rank's own stages come in stage order
    for (int r : rankOf) {
        const auto ru = static_cast<std::size_t>(r);
        const nlohmann::json& own = ru < parts.size() ? parts[ru].perStage : nlohmann::json();
        merged["per_stage"].push_back(
            own.is_array() && next[ru] < own.size() ? own[next[ru]] : nlohmann::json::object());
        ++next[ru];
    }
    std::vector<nlohmann::json> noise;
    for (const RankPart& part : parts) {
        noise.push_back(part.noise);
    }
    merged["noise_scale"] = mergeNoise(noise, static_cast<int>(rankOf.size()));
    double wall = 0.0, busy = 0.0;
    for (const RankPart& part : parts) {
        wall = std::max(wall, part.wallTimeS);
        busy += part.busyTimeS;
    }
    const double seconds = static_cast<double>(makespan) * 1e-9;
    const double tokens = static_cast<double>(config.pipeline.microbatches) * config.pipeline.microBatchSize
        * config.model.shape.seqLen * merged.value("steps", 0);
    merged["virtual_time_s"] = seconds; // the wall-clock timeline of the ranks
    merged["wall_time_s"] = wall;
    merged["busy_time_s"] = busy;
    merged["tokens_per_s_virtual"] = seconds > 0 ? tokens / seconds : 0.0;
    merged["tokens_per_s_wall"] = wall > 0 ? tokens / wall : 0.0;
    // analyze()'s figure of the merged timeline (what the GUI shows when it opens this run).
    double bubble = 0.0;
    if (auto schedule = makeSchedule(toScheduleParams(config)); schedule && !run.events.empty()) {
        bubble =
            profiler::analyze(*profiler::makeSnapshot({p, "wall", "", {}}, run.events), analysisOptionsFor(*schedule))
                .bubbleFraction;
    }
    merged["bubble_fraction"] = bubble;
    merged["ranks"] = p;

    run.meta.stages = p;
    run.meta.clock = "wall";
    run.meta.title = config.schedule.name + " p=" + std::to_string(p) + " m="
        + std::to_string(config.pipeline.microbatches) + " (" + std::to_string(p) + " ranks, " + labels.backend + ")";
    run.meta.attributes["backend"] = labels.backend;
    run.meta.attributes["schedule"] = config.schedule.name;
    run.meta.attributes["ranks"] = std::to_string(p);
    // A lane per rank: where a rank holds several stages, which (as the simulator's trace says).
    if (auto schedule = makeSchedule(toScheduleParams(config)); schedule && !schedule->onePerRank()) {
        run.meta.attributes["stages_per_rank"] = std::to_string(schedule->stagesPerRank());
        run.meta.attributes["placement"] = std::string(placementName(schedule->placement));
    }
    run.meta.attributes["clock_alignment"] = "rendezvous barrier";
    if (labels.clockSkewBoundUs >= 0) {
        run.meta.attributes["clock_skew_bound_us"] = std::to_string(labels.clockSkewBoundUs);
    }
    return run;
}

Status writeMergedRun(const fs::path& dir, bool overwrite, const RunConfig& config, const MergedRun& run,
    const std::vector<nlohmann::json>& metrics)
{
    auto writer = RunDirWriter::create(dir, RunDirOptions{overwrite, false});
    if (!writer) {
        return writer.error();
    }
    if (Status s = writer->writeConfig(config); !s) {
        return s;
    }
    for (const nlohmann::json& record : metrics) {
        if (Status s = writer->appendMetrics(record); !s) {
            return s;
        }
    }
    if (config.profiling.trace) {
        profiler::TraceStore store;
        store.setMeta(run.meta);
        store.append(run.events.data(), run.events.size());
        if (Status s = writer->writeTrace(*store.snapshot()); !s) {
            return s;
        }
    }
    return writer->writeSummary(run.summary);
}

namespace {

/// What rank k's directory holds after a stop: its records and the events of its own stage.
struct RankDir
{
    RunDirContents contents;
    std::vector<profiler::TraceEvent> events;
};

Result<RankDir> readRank(const fs::path& dir, int k, pid_t pid)
{
    if (pid > 0) {
        if (Status s = adoptStagedRun(dir, pid); !s) {
            return s.error();
        }
    }
    auto contents = readRunDir(dir);
    if (!contents) {
        Error e = contents.error();
        e.message = "rank " + std::to_string(k) + " left no run directory to merge: " + e.message;
        return e;
    }
    RankDir out{std::move(*contents), {}};
    if (out.contents.trace) {
        auto trace = readRunTrace(out.contents);
        if (!trace) {
            return trace.error();
        }
        (*trace)->forEach([&](const profiler::TraceEvent& e) {
            if (e.stage == k) {
                out.events.push_back(e);
            }
        });
    }
    return out;
}

double number(const nlohmann::json& record, const char* key)
{
    const auto it = record.find(key);
    return it != record.end() && it->is_number() ? it->get<double>() : 0.0;
}

} // namespace

std::vector<nlohmann::json> mergeMetricsRecords(
    const RunConfig& config, const std::vector<std::vector<nlohmann::json>>& ranks, std::size_t steps)
{
    // The last stage's records (losses), with each stage's own figures and the slowest rank's wall
    // time.
    const int p = static_cast<int>(ranks.size());
    for (const auto& rank : ranks) {
        steps = std::min(steps, rank.size());
    }
    const std::vector<int> rankOf = rankOfStages(config);
    const auto lastRank = static_cast<std::size_t>(rankOf.empty() ? p - 1 : std::min(rankOf.back(), p - 1));
    std::vector<nlohmann::json> metrics;
    for (std::size_t step = 0; p > 0 && step < steps; ++step) {
        nlohmann::json record = ranks[lastRank][step];
        nlohmann::json perStage = nlohmann::json::array();
        double wall = 0.0;
        for (int k = 0; k < p; ++k) {
            wall = std::max(wall, number(ranks[static_cast<std::size_t>(k)][step], "wall_time_s"));
        }
        for (std::size_t st = 0; st < rankOf.size(); ++st) { // each stage's figures from the rank that ran it
            const auto k = static_cast<std::size_t>(std::min(rankOf[st], p - 1));
            const nlohmann::json& own = ranks[k][step];
            const auto stages = own.find("per_stage");
            perStage.push_back(stages != own.end() && stages->is_array() && stages->size() > st
                    ? (*stages)[st]
                    : nlohmann::json{{"stage", st}});
        }
        record["per_stage"] = std::move(perStage);
        record["wall_time_s"] = wall;
        std::vector<nlohmann::json> noise; // each rank's own stages' estimates, summed (mergeNoise)
        for (int k = 0; k < p; ++k) {
            noise.push_back(ranks[static_cast<std::size_t>(k)][step].value("noise", nlohmann::json()));
        }
        record["noise"] = mergeNoise(noise, static_cast<int>(rankOf.size()));
        metrics.push_back(std::move(record));
    }
    return metrics;
}

Result<nlohmann::json> mergeStoppedRanks(const fs::path& outDir, const std::vector<pid_t>& rankPids, bool overwrite,
    const std::string& requestedBackend, const std::string& stoppedBy, const std::string& error)
{
    const int p = static_cast<int>(rankPids.size());
    std::vector<RankDir> ranks;
    std::size_t finished = std::numeric_limits<std::size_t>::max(); // global batches every rank finished
    for (int k = 0; k < p; ++k) {
        auto rank = readRank(outDir / ("rank" + std::to_string(k)), k, rankPids[static_cast<std::size_t>(k)]);
        if (!rank) {
            return rank.error();
        }
        finished = std::min(finished, rank->contents.metrics.size());
        ranks.push_back(std::move(*rank));
    }
    if (ranks.empty()) {
        return makeError(ErrorCode::InvalidArgument, "no ranks to merge", outDir.string());
    }
    const RunConfig& config = ranks.front().contents.config;
    const std::int64_t m = config.pipeline.microbatches;
    const std::int64_t lastMicrobatch = static_cast<std::int64_t>(finished) * m; // exclusive
    std::vector<std::vector<nlohmann::json>> records;
    for (const RankDir& rank : ranks) {
        records.push_back(rank.contents.metrics);
    }
    const std::vector<nlohmann::json> metrics = mergeMetricsRecords(config, records, finished);
    std::vector<RankPart> parts;
    for (int k = 0; k < p; ++k) {
        RankDir& rank = ranks[static_cast<std::size_t>(k)];
        RankPart part;
        part.perStage = ownStages(config, k, finished > 0 ? metrics[finished - 1]["per_stage"] : nlohmann::json());
        part.wallTimeS = finished > 0 ? number(rank.contents.metrics[finished - 1], "wall_time_s") : 0.0;
        part.noise =
            finished > 0 ? rank.contents.metrics[finished - 1].value("noise", nlohmann::json()) : nlohmann::json();
        for (const profiler::TraceEvent& e : rank.events) {
            const bool keep = e.kind == profiler::EventKind::Marker ? e.microbatch < static_cast<std::int64_t>(finished)
                                                                    : e.microbatch < lastMicrobatch;
            if (keep) {
                part.events.push_back(e);
                if (e.lane == profiler::Lane::Compute && e.kind != profiler::EventKind::Marker) {
                    part.busyTimeS += static_cast<double>(e.end - e.start) * 1e-9;
                }
            }
        }
        parts.push_back(std::move(part));
    }
    nlohmann::json base = nlohmann::json::object();
    base["schedule"] = config.schedule.name;
    base["reference"] = false;
    base["steps"] = finished;
    nlohmann::json losses = nlohmann::json::array();
    for (const nlohmann::json& record : metrics) {
        losses.push_back(record.value("train_loss", nlohmann::json(nullptr)));
    }
    base["final_train_loss"] = losses.empty() ? nlohmann::json(nullptr) : losses.back();
    base["losses"] = std::move(losses);
    base["val_loss"] = nullptr;
    base["val_losses"] = nlohmann::json::array();
    base["val_steps"] = nlohmann::json::array();
    base["val_virtual_times_s"] = nlohmann::json::array();
    base["device"] = config.device.name;
    base["dtype"] = config.model.dtype;
    base["error"] = error;
    if (!stoppedBy.empty()) {
        base["stopped"] = stoppedBy;
    }
    base["steps_planned"] = config.training.steps;
    const Result<std::string> backend = distBackend(requestedBackend, config);
    MergedRun run = mergeRankParts(
        config, std::move(base), std::move(parts), MergeLabels{backend ? *backend : requestedBackend, -1});
    run.meta.attributes["cut_short"] = stoppedBy.empty() ? "failure" : stoppedBy;
    if (Status s = writeMergedRun(outDir, overwrite, config, run, metrics); !s) {
        return s.error();
    }
    return run.summary;
}

} // namespace bs::runtime
