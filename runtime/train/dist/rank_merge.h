#pragma once
// One run directory from the ranks of a multi-process run (torch-free, so `launch` can use it
// without loading the training runtime).
//
// Two callers: rank 0 at the end of a run that finished (dist_train.cpp: every rank's summary and
// trace events through the rendezvous store), and `launch` after a run that a signal stopped or a
// rank's failure ended (mergeStoppedRanks: what each rank's directory OUT/rankK holds, i.e. its
// metrics records and the trace chunks it appended after each global batch it finished).
//
// A stopped run's merge covers the global batches that *every* rank finished (n = the fewest
// metrics records of any rank): the trace keeps the actions of those batches' micro-batches,
// metrics.jsonl has n records (losses from the last stage, per-stage figures from the rank that
// ran the stage), summary.json says "stopped" (the signal) and how far the run got.

#include "base/result.h"
#include "profiler/trace/trace_store.h"
#include "runtime/plan/config/run_config.h"

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

/// What one rank contributes to the merged run.
struct RankPart
{
    nlohmann::json perStage; ///< array: the per_stage objects of its own stages (summary or metrics schema)
    double wallTimeS = 0.0; ///< its training wall time
    double busyTimeS = 0.0; ///< its measured action time
    std::vector<profiler::TraceEvent> events; ///< its stage's events, ns since the shared clock zero
    nlohmann::json noise; ///< its noise_scale (its own stages' estimates; null when it has none)
};

/// The model's gradient noise scale (run_metrics.h's "noise" / "noise_scale") from each rank's
/// estimate of its own stages: every stage once, summed; null unless each of the `stages` has one.
nlohmann::json mergeNoise(const std::vector<nlohmann::json>& rankEstimates, int stages);

struct MergedRun
{
    nlohmann::json summary; ///< the `train --json` schema, plus "ranks"
    std::vector<profiler::TraceEvent> events; ///< every rank's, sorted, first action at t = 0
    profiler::TraceMeta meta; ///< one lane per stage, wall clock
};

/// Labels of the merged trace.
struct MergeLabels
{
    std::string backend; ///< "gloo" or "nccl"
    double clockSkewBoundUs = -1; ///< < 0: not measured (a merge after a stop)
};

/// Per model stage of `config` (p · v of them): the rank that holds it (the schedule's placement).
std::vector<int> rankOfStages(const RunConfig& config);
/// Picks rank `rank`'s own stages out of its per_stage array (a rank reports every model stage;
/// it ran only its own): an array of them, or of {"stage": s} where the array lacks one.
nlohmann::json ownStages(const RunConfig& config, int rank, const nlohmann::json& perStage);

/// Merges `parts` (index = rank) over `base`, the summary of the last stage's rank (losses,
/// validation): per_stage (every model stage, in order), wall/busy time, the timeline's makespan
/// and tokens/s, analyze()'s bubble fraction of the merged timeline, "ranks".
MergedRun mergeRankParts(
    const RunConfig& config, nlohmann::json base, std::vector<RankPart> parts, const MergeLabels& labels);

/// The merged metrics.jsonl records of the first `steps` global batches every rank finished
/// (`ranks[k]`: rank k's records, in order): the last stage's rank's record (losses) with per_stage
/// from the rank that ran each stage and the slowest rank's wall_time_s.
std::vector<nlohmann::json> mergeMetricsRecords(
    const RunConfig& config, const std::vector<std::vector<nlohmann::json>>& ranks, std::size_t steps);
/// Writes config.toml, the metrics records, trace.json (when config.profiling.trace) and
/// summary.json (last) into `dir` (RunDirWriter: an overwriting merge replaces the old files
/// only once summary.json is written).
Status writeMergedRun(const std::filesystem::path& dir, bool overwrite, const RunConfig& config, const MergedRun& run,
    const std::vector<nlohmann::json>& metrics);

/// After a stop or a failure: merges what OUT/rankK holds for k < rankPids.size() (a rank whose
/// overwriting writer never finished has its files in its staging directory, found by its pid;
/// they are moved over the rank's old files first, since they are what this run measured).
/// `requestedBackend`: the ranks' --backend ("" = the device's default). `stoppedBy`: "SIGINT"/"SIGTERM" (summary
/// "stopped"), or empty after a failure; `error`: the summary's one-line "error" (empty for a stop). Returns the merged
/// summary. Errors: IoError / ParseError naming the rank directory when a rank left no readable run directory at all.
Result<nlohmann::json> mergeStoppedRanks(const std::filesystem::path& outDir, const std::vector<pid_t>& rankPids,
    bool overwrite, const std::string& requestedBackend, const std::string& stoppedBy, const std::string& error);

} // namespace bs::runtime
