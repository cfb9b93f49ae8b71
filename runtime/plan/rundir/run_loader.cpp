#include "runtime/plan/rundir/run_loader.h"

#include <nlohmann/json.hpp>

namespace bs::runtime {

Result<LoadedRun> loadRun(const std::filesystem::path& dir, TraceLoad traceLoad)
{
    auto contents = readRunDir(dir);
    if (!contents) {
        return contents.error();
    }
    LoadedRun run;
    run.dir = contents->dir;
    run.config = contents->config;
    run.warnings = contents->warnings;
    run.cutShort = contents->cutShort;
    if (contents->trace && traceLoad == TraceLoad::Read) {
        auto trace = readRunTrace(*contents);
        if (!trace) {
            return trace.error();
        }
        run.trace = *trace;
    }
    const std::string where = (contents->dir / "metrics.jsonl").string();
    for (std::size_t i = 0; i < contents->metrics.size(); ++i) {
        const nlohmann::json& record = contents->metrics[i];
        if (!record.is_object() || !record.contains("train_loss")) {
            run.warnings.push_back(where + " record " + std::to_string(i + 1) + ": no train_loss, skipped");
            continue;
        }
        try {
            run.metrics.push_back(record.get<BatchMetrics>());
        } catch (const nlohmann::json::exception& e) {
            return makeError(ErrorCode::ParseError, e.what(), where + " record " + std::to_string(i + 1));
        }
    }
    if (contents->summary) {
        try {
            run.summary = contents->summary->get<RunSummary>();
        } catch (const nlohmann::json::exception& e) {
            return makeError(ErrorCode::ParseError, e.what(), (contents->dir / "summary.json").string());
        }
    }
    return run;
}

} // namespace bs::runtime
