#pragma once
// Hand-made trace events for tests (analysis, the UI's fixtures).

#include "profiler/trace/trace_event.h"

namespace bs::profiler::test {

/// A compute event (version: the stage's weight version; aux: the chunk on multi-stage ranks).
inline TraceEvent ev(int stage, EventKind kind, int mb, TimeNs start, TimeNs end, int version = 0, int aux = 0)
{
    TraceEvent e;
    e.stage = static_cast<std::uint16_t>(stage);
    e.kind = kind;
    e.microbatch = mb;
    e.start = start;
    e.end = end;
    e.version = version;
    e.aux = static_cast<std::uint16_t>(aux);
    return e;
}

/// A transfer from lane `from` into lane `to`.
inline TraceEvent send(int from, int to, int mb, TimeNs start, TimeNs end)
{
    TraceEvent e = ev(from, EventKind::Send, mb, start, end);
    e.lane = Lane::Comm;
    e.aux = static_cast<std::uint16_t>(to);
    return e;
}

} // namespace bs::profiler::test
