#pragma once
// Chrome / Perfetto trace JSON for the profiler's events ("JSON Object Format", loadable in
// chrome://tracing, ui.perfetto.dev and Bubblescope itself).
//
// Layout: one process per stage (pid = stage, process_name "stage N"), one thread per lane
// (tid = Lane value, thread_name compute / comm / kernels); every event is a complete event
// ("ph":"X") named like PyTorch pipelining, "PP:<stage><letter><mb>" (PP:0F3, PP:2U1), with ts/dur
// in microseconds printed with 3 decimals (exact nanoseconds) and args {mb, version, bytes, aux};
// markers are instant events ("ph":"i"). TraceMeta goes into "otherData", written first so a
// reader knows the file is ours before the events.

#include "profiler/trace/trace_store.h"
#include "base/result.h"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace bs::profiler {

/// Streams the trace to `out` through a 1 MiB buffer (no JSON tree is built; about 170 bytes per
/// event). IoError when the stream fails.
Status writeChromeTrace(std::ostream& out, const TraceSnapshot& trace);

/// The same JSON as a string (tests, small traces).
std::string toChromeTraceJson(const TraceSnapshot& trace);

/// What a trace file held.
struct ChromeTrace
{
    TraceMeta meta;
    std::vector<TraceEvent> events; ///< in file order
    bool foreign = false; ///< not written by Bubblescope (no otherData.bubblescope)
    std::size_t skippedEvents = 0; ///< foreign events not named PP:<stage><letter><mb>, or of other phases
};

/// Parses trace JSON (object format, or a bare event array). Our own files are read strictly and
/// exactly: every field of every event comes back as written. Foreign traces are read leniently:
/// events with PP: names are kept (stage, kind and micro-batch from the name), others are counted
/// in skippedEvents. Errors are ParseError with context "byte N" for malformed JSON, or
/// "traceEvents[i].field" for a bad event in one of our files.
Result<ChromeTrace> readChromeTrace(std::string_view json);

/// A trace file written in chunks as a run goes (so a killed run keeps what it traced): the head
/// (metadata, stage names, the opening of "traceEvents"), then chunks of events appended in order;
/// only a finished writer closes it ("\n]}\n"). Concatenated with the closing, they are exactly
/// what writeChromeTrace writes.
std::string chromeTraceHead(const TraceMeta& meta);
/// Events [begin, end) of `trace`, each after a comma unless it is the very first (`first`).
std::string chromeTraceChunk(const TraceSnapshot& trace, std::size_t begin, std::size_t end, bool first);
/// Reads a chunked trace whose writer never closed it (killed): every whole event up to the cut.
Result<ChromeTrace> readCutShortChromeTrace(std::string_view json);
Result<ChromeTrace> readCutShortChromeTraceFile(const std::filesystem::path& path);

/// Largest trace file accepted (it is mapped, not copied; 10^8 events are ~17 GB).
inline constexpr std::uint64_t kMaxTraceFileBytes = std::uint64_t{64} << 30;

/// Reads a file and parses it. IoError naming the file when it cannot be read, is not a regular
/// file (a FIFO is refused at once, not waited on) or exceeds kMaxTraceFileBytes.
Result<ChromeTrace> readChromeTraceFile(const std::filesystem::path& path);

} // namespace bs::profiler
