#pragma once
// A run directory as typed values: what RunDirWriter wrote, read back through readRunDir() and the
// from_json readers next to the writers' to_json (run_metrics.h), so no caller (the GUI's "open
// run", comparisons) reads summary.json or metrics.jsonl keys itself. No Qt, no torch.

#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/plan/rundir/run_metrics.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

struct LoadedRun
{
    std::filesystem::path dir;
    RunConfig config;
    std::vector<BatchMetrics> metrics; ///< one per completed global batch, in file order
    std::optional<RunSummary> summary; ///< absent while the run is in progress or after a crash
    std::shared_ptr<const profiler::TraceSnapshot> trace; ///< null when the run has no trace.json yet
    bool cutShort = false; ///< killed mid-run: the trace is trace.partial.json up to its last whole event
    std::vector<std::string> warnings; ///< readRunDir's, and records skipped for having no train_loss
};

/// Whether loadRun() reads the trace: the statistics of a run (its noise scale, the batch it
/// reached a target at) need only its config and metrics, and a trace can be hundreds of MB.
enum class TraceLoad : std::uint8_t
{
    Read,
    Skip, ///< LoadedRun::trace stays null
};

/// readRunDir(`dir`), its trace when there is one (unless `trace` is Skip), and every record as BatchMetrics /
/// RunSummary. Errors: readRunDir's; the trace reader's for a trace.json that is there but unreadable; ParseError
/// "…/metrics.jsonl record N" or "…/summary.json" for a value from_json cannot take. Never throws.
Result<LoadedRun> loadRun(const std::filesystem::path& dir, TraceLoad trace = TraceLoad::Read);

} // namespace bs::runtime
