#pragma once
// Writes a run directory as a run goes:
//   config.toml    the RunConfig that reproduces the run          (atomic)
//   metrics.jsonl  one JSON object per global batch, appended     (one write(2) per record)
//   trace.json     Chrome/Perfetto trace of every action          (atomic, streamed)
//   summary.json   final figures, written when the run ends        (atomic)
// Each metrics record reaches the kernel before appendMetrics() returns, so a crash of the process
// loses at most a record being written; `durable` also fdatasyncs each one (power loss).

#include "profiler/trace/trace_store.h"
#include "base/result.h"
#include "runtime/config/run_config.h"

#include <filesystem>
#include <nlohmann/json.hpp>

namespace bs::runtime {

inline constexpr const char* kConfigFileName = "config.toml";
inline constexpr const char* kMetricsFileName = "metrics.jsonl";
inline constexpr const char* kTraceFileName = "trace.json";
inline constexpr const char* kSummaryFileName = "summary.json";

struct RunDirOptions
{
    bool overwrite = false; ///< replace an existing run's files instead of refusing
    bool durable = false; ///< fdatasync after every metrics record
};

/// Not thread-safe: one writer per run, used from the thread that drives the run.
class RunDirWriter
{
public:
    /// Creates `dir` (with parents) and opens metrics.jsonl. A directory that already holds a run
    /// (any of the four files) is an InvalidArgument error unless options.overwrite, which deletes
    /// those files first. IoError when the directory cannot be created or written.
    static Result<RunDirWriter> create(const std::filesystem::path& dir, RunDirOptions options = {});

    RunDirWriter(RunDirWriter&& other) noexcept;
    RunDirWriter& operator=(RunDirWriter&& other) noexcept;
    RunDirWriter(const RunDirWriter&) = delete;
    RunDirWriter& operator=(const RunDirWriter&) = delete;
    ~RunDirWriter(); ///< closes metrics.jsonl (with an fsync)

    const std::filesystem::path& dir() const { return m_dir; }

    Status writeConfig(const RunConfig& config);
    /// Appends `record` (must be an object) as one line. NaN/inf numbers become null (JSON has none).
    Status appendMetrics(const nlohmann::json& record);
    Status writeTrace(const profiler::TraceSnapshot& trace);
    Status writeSummary(const nlohmann::json& summary);

private:
    RunDirWriter(std::filesystem::path dir, int metricsFd, bool durable);

    std::filesystem::path m_dir;
    int m_metricsFd = -1;
    bool m_durable = false;
};

} // namespace bs::runtime
