#pragma once
// Reads one rank's torch.profiler trace (the Kineto JSON that export_chrome_trace and
// tensorboard_trace_handler write, plain or gzip) into a RankTrace. Streams the file through an
// nlohmann SAX handler: memory is the kept events (48 bytes each) plus one 1 MiB buffer; no JSON
// tree is built except for `distributedInfo`. Never throws.

#include "base/result.h"
#include "profiler/import/kineto_trace.h"

#include <string>

namespace bs::profiler::kineto {

/// How the message of a well-formed JSON file without "traceEvents" starts (folders skip those).
inline constexpr const char* kNotATrace = "not a Kineto trace";

/// What one rank's trace may hold at most, so a runaway file (a profile left on for hours, a gzip
/// bomb) is an error, not memory exhaustion: 50 M complete events is 2.4 GB of kept events.
struct ReadLimits
{
    std::size_t maxEvents = 50'000'000;
    std::size_t maxNames = 1'000'000; ///< distinct event names and threads
};

/// ParseError / IoError messages name the file and the position: "byte N" for malformed JSON or a
/// truncated gzip stream, "traceEvents[i]" (and the byte) for an event whose fields have the wrong
/// type (ts not a number, dur negative, name not a string).
Result<RankTrace> readKinetoTrace(const std::string& path, const ReadLimits& limits = {});

} // namespace bs::profiler::kineto
