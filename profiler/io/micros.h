#pragma once
// Trace timestamps are JSON numbers of microseconds; the engine counts integer nanoseconds.

#include "profiler/trace/trace_event.h"

#include <optional>
#include <string_view>

namespace bs::profiler {

/// Largest |timestamp| accepted, in µs: 9.2e15 µs = 9.2e18 ns, just inside int64 (292 years).
inline constexpr std::int64_t kMaxTraceMicros = 9'200'000'000'000'000;

/// Nanoseconds from the text of a JSON number of microseconds. Exact for plain decimals with at
/// most three fractional digits ("1500", "-0.007", "9000000000000.123": what the writer emits),
/// rounded to the nearest ns otherwise (more digits, exponents). nullopt for anything that is not
/// a number or beyond ±kMaxTraceMicros.
std::optional<TimeNs> microsTextToNs(std::string_view text);

} // namespace bs::profiler
