#pragma once
// Writes a run directory as a run goes:
//   config.toml    the RunConfig that reproduces the run          (atomic)
//   metrics.jsonl  one JSON object per global batch, appended     (one write(2) per record)
//   trace.partial.json  the trace so far, one chunk appended per global batch, so a killed run
//                  (SIGKILL, the OOM killer) keeps everything up to its last finished batch;
//                  removed once trace.json is in place
//   trace.json     Chrome/Perfetto trace of every action          (atomic, streamed at the end)
//   summary.json   final figures, written when the run ends        (atomic)
// Each metrics record reaches the kernel before appendMetrics() returns, so a crash of the process
// loses at most a record being written; `durable` also fdatasyncs each one (power loss).

#include "base/result.h"
#include "profiler/trace/trace_store.h"
#include "runtime/plan/config/run_config.h"

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <filesystem>

namespace bs::runtime {

inline constexpr const char* kConfigFileName = "config.toml";
inline constexpr const char* kMetricsFileName = "metrics.jsonl";
inline constexpr const char* kTraceFileName = "trace.json";
inline constexpr const char* kSummaryFileName = "summary.json";
inline constexpr const char* kPartialTraceFileName = "trace.partial.json";

struct RunDirOptions
{
    bool overwrite = false; ///< replace an existing run's files instead of refusing
    bool durable = false; ///< fdatasync after every metrics record
};

/// A writer killed while overwriting `dir` (process `pid`) left the files of its run in a staging
/// directory: moves them over the old run's files (they are what the killed run measured; the old
/// run's files it has none of go) and removes the staging directory. Nothing to adopt: ok.
/// `launch` calls it for each rank after a stop, before merging the ranks' directories.
Status adoptStagedRun(const std::filesystem::path& dir, pid_t pid);

/// Not thread-safe: one writer per run, used from the thread that drives the run.
class RunDirWriter
{
public:
    /// Creates `dir` (with parents) and opens metrics.jsonl. A directory that already holds a run
    /// (any of its files) is an InvalidArgument error unless options.overwrite: then the new run is
    /// written to a hidden staging directory inside `dir` and replaces the old run's files only
    /// when writeSummary() succeeds, so a new run that fails or is killed leaves the old one whole.
    /// Temp files and staging directories that killed writers left behind are removed first.
    /// IoError when the directory cannot be created or written.
    static Result<RunDirWriter> create(const std::filesystem::path& dir, RunDirOptions options = {});
    /// Continues the run in `dir` from its checkpoint at `keepSteps` global batches (train
    /// --resume): metrics.jsonl keeps only the records of steps < keepSteps (rewritten
    /// atomically; later ones belong to batches the resumed run trains again) and is appended to;
    /// summary.json is removed (the run is in progress again); the old trace.json stays until the
    /// first appendTrace() has written the continued trace (the caller hands it every event it
    /// keeps). InvalidArgument when `dir` holds no run (config.toml); the metrics reader's errors.
    static Result<RunDirWriter> resume(const std::filesystem::path& dir, int keepSteps, RunDirOptions options = {});

    RunDirWriter(RunDirWriter&& other) noexcept;
    RunDirWriter& operator=(RunDirWriter&& other) noexcept;
    RunDirWriter(const RunDirWriter&) = delete;
    RunDirWriter& operator=(const RunDirWriter&) = delete;
    ~RunDirWriter(); ///< closes metrics.jsonl (with an fsync)

    /// Where the files are being written now (a staging directory while overwriting).
    const std::filesystem::path& dir() const { return m_dir; }
    /// Where checkpoints go (checkpoint_state.h): dir()/checkpoint; an overwriting run's move
    /// with its other files when it ends.
    std::filesystem::path checkpointDir() const;

    Status writeConfig(const RunConfig& config);
    /// Appends `record` (must be an object) as one line. NaN/inf numbers become null (JSON has none).
    Status appendMetrics(const nlohmann::json& record);
    /// Appends the events of `trace` not yet appended to trace.partial.json (one write(2)); the
    /// first call writes the head from trace.meta(). Call once per finished global batch.
    Status appendTrace(const profiler::TraceSnapshot& trace);
    /// One finished global batch: `trace`'s new events (appendTrace(); none when null), then its
    /// metrics `record` (appendMetrics()). In that order, so that a process killed at any moment
    /// (a rank of `launch`, which a stop signal ends) never has a record whose batch its trace
    /// lacks: merges keep the batches every rank has a record of, with their events. Its record
    /// is not appended when the trace could not be.
    Status appendBatch(const nlohmann::json& record, const profiler::TraceSnapshot* trace);
    /// trace.json, atomically; then trace.partial.json is removed.
    Status writeTrace(const profiler::TraceSnapshot& trace);
    /// summary.json, atomically: the last file of a run (an overwriting run replaces the old one now).
    Status writeSummary(const nlohmann::json& summary);

private:
    RunDirWriter(std::filesystem::path dir, int metricsFd, bool durable);
    void closeFds();
    Status promote();

    std::filesystem::path m_dir;
    std::filesystem::path m_finalDir;
    int m_metricsFd = -1;
    int m_traceFd = -1;
    std::size_t m_traceWritten = 0;
    bool m_traceHasEvents = false;
    bool m_durable = false;
    bool m_dropOldTrace = false; ///< resumed: trace.json goes once trace.partial.json has the continued trace
};

} // namespace bs::runtime
