#pragma once
// The timeline's find box: a query names a stage, an action kind and/or a micro-batch, either in
// the compact PyTorch-pipelining form ("1F2" = stage 1, forward, micro-batch 2; "3B" = every
// backward of stage 3) or in words ("stage 1", "mb 2", "forward", "update", combined freely:
// "stage 2 backward mb 5"). Pure C++ (no Qt): parse once, then test events.

#include "profiler/trace/trace_store.h"

#include <optional>
#include <string>
#include <vector>

namespace bs::ui {

struct EventQuery
{
    std::optional<std::size_t> stage;
    std::optional<profiler::EventKind> kind;
    std::optional<std::int64_t> microbatch;

    bool matches(const profiler::TraceEvent& e) const;
};

/// Parses `text`; nullopt when it names nothing (empty, or a word it does not know).
std::optional<EventQuery> parseEventQuery(const std::string& text);

/// Snapshot indices of the compute events `query` matches, in time order.
std::vector<std::size_t> findEvents(const profiler::TraceSnapshot& trace, const EventQuery& query);

} // namespace bs::ui
