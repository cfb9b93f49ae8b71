#pragma once
// Event names in PyTorch pipelining's record_function style: "PP:<stage><letter><mb>", e.g.
// "PP:0F3" (stage 0, forward, micro-batch 3) or "PP:2U1" (stage 2, update 1). Shared by the
// Chrome trace writer and reader so the two always agree.

#include "profiler/trace/trace_event.h"

#include <optional>
#include <string>
#include <string_view>

namespace bs::profiler {

/// "PP:<stage><letter><microbatch>"; a negative micro-batch is written as is ("PP:0M-1").
std::string eventName(const TraceEvent& event);

struct ParsedEventName
{
    int stage = 0;
    EventKind kind = EventKind::Forward;
    std::int32_t microbatch = 0;
};

/// Parses eventName()'s form; nullopt for anything else (foreign events).
std::optional<ParsedEventName> parseEventName(std::string_view name);

/// The kind written with `letter` (F B I W U S K M), or nullopt.
std::optional<EventKind> eventKindFromLetter(char letter);

} // namespace bs::profiler
