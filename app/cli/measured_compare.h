#pragma once
// `compare --runs DIR,...`: run directories side by side as they were measured — bubble from
// their own trace (the analysis the GUI runs on an opened run), version lag and weight drift from
// their own tensors, the gradient noise scale from their own gradients, per model stage (chunk)
// and over the run. Torch-free: it only reads files.

#include "base/result.h"
#include "profiler/analysis/report.h"
#include "runtime/plan/common/noise_scale.h"
#include "runtime/plan/common/stage_drift.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bs::cli {

struct MeasuredRun
{
    std::string label;    ///< the directory's name
    std::string schedule; ///< schedule.name
    int ranks = 0, stagesPerRank = 1, microbatches = 0, accum = 0, steps = 0, microBatchSize = 1;
    profiler::Report report; ///< analyze() of trace.json with the schedule's options
    double samplesPerSecond = 0; ///< m · b · steps / makespan (the trace's clock)
    runtime::RunDrift drift; ///< from summary.json (else the last metrics.jsonl record)
    std::vector<int> lagBounds; ///< stated bound per model stage; empty = the schedule states none
    /// The gradient noise scale its stages measured (summary.json, else the last record); none in
    /// runs written before it was measured.
    std::optional<runtime::NoiseScaleEstimate> noise;
};

/// Reads and analyses one run directory. Errors: loadRun()'s; IoError naming the directory when
/// it has no trace yet; the schedule generator's for a config it refuses.
Result<MeasuredRun> measureRunDir(const std::filesystem::path& dir);

/// Prints the runs as one table (one row per run) and, below it, their stages (one row per model
/// stage: rank, chunk, lag against its bound, drift), or as a JSON array. Returns the exit code.
int compareRunDirs(const std::vector<std::string>& dirs, bool json);

} // namespace bs::cli
