#pragma once
// Loads a run directory back (the GUI's "open run", the CLI's compare): config, metrics records,
// summary. trace.json is only located here; read it with profiler::readChromeTraceFile.

#include "base/result.h"
#include "profiler/trace/trace_store.h"
#include "runtime/plan/config/run_config.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bs::runtime {

/// Largest metrics.jsonl / summary.json accepted (a 10^5-batch, 8-stage run writes ~500 MB).
inline constexpr std::uint64_t kMaxMetricsFileBytes = std::uint64_t{4} << 30;
inline constexpr std::uint64_t kMaxSummaryFileBytes = std::uint64_t{256} << 20;

struct MetricsLog
{
    std::vector<nlohmann::json> records; ///< one object per line, in file order
    std::vector<std::string> warnings; ///< e.g. an incomplete last line that was ignored
};

/// Parses metrics.jsonl text. Blank lines are skipped. A last line without its newline that does
/// not parse is the record a crash interrupted: ignored with a warning. Any other bad line, and
/// any known field of the wrong type or range (run_dir_schema.h), is a ParseError with context
/// "sourceName:LINE" (1-based), followed by ": field" for a field.
Result<MetricsLog> parseMetricsJsonl(std::string_view text, std::string_view sourceName = "metrics.jsonl");

struct RunDirContents
{
    std::filesystem::path dir;
    RunConfig config;
    std::vector<nlohmann::json> metrics;
    std::optional<nlohmann::json> summary; ///< absent while the run is in progress or after a crash
    std::optional<std::filesystem::path> trace; ///< trace.json, else trace.partial.json, when present
    bool cutShort = false; ///< the run was killed: only trace.partial.json (read up to its last whole event)
    std::vector<std::string> warnings;
};

/// Reads `dir`. config.toml is required (IoError "not a run directory" without it; its own parse
/// errors as loadRunConfig gives them); metrics.jsonl may be missing (no records yet); a corrupt
/// summary.json is a ParseError with context "…/summary.json: byte N", a field of the wrong type
/// or range one with context "…/summary.json: field". Files that are not regular files or exceed
/// the limits above are IoErrors naming them: nothing is read without a bound.
Result<RunDirContents> readRunDir(const std::filesystem::path& dir);

/// The run's trace.json as a snapshot (opening a run, calibrating from it). IoError when the run
/// has no trace.json yet; the trace reader's errors otherwise.
Result<std::shared_ptr<const profiler::TraceSnapshot>> readRunTrace(const RunDirContents& run);

} // namespace bs::runtime
