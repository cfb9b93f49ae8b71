#include "runtime/plan/rundir/run_dir_reader.h"

#include "base/bounded_read.h"
#include "profiler/io/chrome_trace.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/rundir/run_dir_schema.h"
#include "runtime/plan/rundir/run_dir_writer.h"

namespace bs::runtime {

namespace fs = std::filesystem;

namespace {

/// exists() without throwing: a permission error reads as "absent" and the reader that follows
/// reports it with the path.
bool present(const fs::path& path)
{
    std::error_code ec;
    return fs::exists(path, ec) && !ec;
}

} // namespace

Result<MetricsLog> parseMetricsJsonl(std::string_view text, std::string_view sourceName)
{
    MetricsLog log;
    std::size_t lineNumber = 0;
    for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t newline = text.find('\n', pos);
        const bool complete = newline != std::string_view::npos;
        const std::string_view line = text.substr(pos, complete ? newline - pos : std::string_view::npos);
        pos = complete ? newline + 1 : text.size();
        ++lineNumber;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
            continue;
        }
        const std::string where = std::string(sourceName) + ":" + std::to_string(lineNumber);
        // No exceptions: a number past double's range (1e400) is a discarded record like any syntax error.
        nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (record.is_discarded() || !record.is_object()) {
            if (!complete && record.is_discarded()) {
                log.warnings.push_back(where + ": incomplete last record ignored (the run stopped while writing it)");
                break;
            }
            return makeError(ErrorCode::ParseError,
                record.is_discarded() ? "metrics record is not valid JSON" : "metrics record is not a JSON object",
                where);
        }
        if (Status fields = checkMetricsRecord(record, where); !fields) {
            return fields.error();
        }
        log.records.push_back(std::move(record));
    }
    return log;
}

Result<RunDirContents> readRunDir(const fs::path& dir)
{
    RunDirContents run;
    run.dir = dir;
    const fs::path configPath = dir / kConfigFileName;
    std::error_code ec;
    if (!fs::exists(dir, ec)) { // say what is missing: the directory, not its config.toml
        return makeError(ErrorCode::IoError, "'" + dir.string() + "' does not exist", dir.string());
    }
    if (!fs::is_directory(dir, ec)) {
        return makeError(ErrorCode::IoError, "'" + dir.string() + "' is not a directory", dir.string());
    }
    if (!present(configPath)) {
        return makeError(ErrorCode::IoError,
            "'" + dir.string() + "' is not a run directory: " + kConfigFileName + " is missing", configPath.string());
    }
    Result<RunConfig> config = loadRunConfig(configPath);
    if (!config) {
        return config.error();
    }
    run.config = std::move(*config);

    const fs::path metricsPath = dir / kMetricsFileName;
    if (present(metricsPath)) {
        Result<std::string> text = readBoundedFile(metricsPath, kMaxMetricsFileBytes, "metrics file");
        if (!text) {
            return text.error();
        }
        Result<MetricsLog> log = parseMetricsJsonl(*text, metricsPath.string());
        if (!log) {
            return log.error();
        }
        run.metrics = std::move(log->records);
        run.warnings = std::move(log->warnings);
    }

    const fs::path summaryPath = dir / kSummaryFileName;
    if (present(summaryPath)) {
        Result<std::string> text = readBoundedFile(summaryPath, kMaxSummaryFileBytes, "summary file");
        if (!text) {
            return text.error();
        }
        try {
            run.summary = nlohmann::json::parse(*text);
        } catch (const nlohmann::json::parse_error& e) {
            return makeError(ErrorCode::ParseError, std::string("summary is not valid JSON: ") + e.what(),
                summaryPath.string() + ": byte " + std::to_string(e.byte));
        } catch (const nlohmann::json::exception& e) { // out_of_range: a number like 1e400
            return makeError(
                ErrorCode::ParseError, std::string("summary is not valid JSON: ") + e.what(), summaryPath.string());
        }
        if (Status fields = checkSummary(*run.summary, summaryPath.string()); !fields) {
            return fields.error();
        }
    }
    if (present(dir / kTraceFileName)) {
        run.trace = dir / kTraceFileName;
    } else if (present(dir / kPartialTraceFileName)) {
        run.trace = dir / kPartialTraceFileName;
        run.cutShort = true;
        run.warnings.push_back(
            "the run was cut short (killed before it finished): " + std::to_string(run.metrics.size())
            + " global batches recorded; the trace holds every action up to the last of them");
    }
    return run;
}

Result<std::shared_ptr<const profiler::TraceSnapshot>> readRunTrace(const RunDirContents& run)
{
    if (!run.trace) {
        return makeError(ErrorCode::IoError, "the run has no trace.json yet", run.dir.string());
    }
    auto trace =
        run.cutShort ? profiler::readCutShortChromeTraceFile(*run.trace) : profiler::readChromeTraceFile(*run.trace);
    if (!trace) {
        return trace.error();
    }
    return profiler::makeSnapshot(trace->meta, trace->events);
}

} // namespace bs::runtime
