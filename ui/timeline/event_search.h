#pragma once
// The timeline's find box: a query names a stage, an action kind and/or a micro-batch, either in
// the compact PyTorch-pipelining form ("1F2" = stage 1, forward, micro-batch 2; "3B" = every
// backward of stage 3) or in words ("stage 1", "mb 2", "forward", "update", combined freely:
// "stage 2 backward mb 5"). The stage is the model stage (PyTorch's stage index): on a trace whose
// ranks hold several stages the caller says which events are a stage's work (its chunk on its
// rank: TimelineIndex::isWorkOfStage). Pure C++ (no Qt): parse once, then test events.

#include "profiler/trace/trace_store.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace bs::ui {

/// Whether event `e` is work of model stage `stage`. The default (empty): one stage per lane,
/// e.stage == stage.
using StageMatcher = std::function<bool(const profiler::TraceEvent& e, std::size_t stage)>;

struct EventQuery
{
    std::optional<std::size_t> stage; ///< model stage
    std::optional<profiler::EventKind> kind;
    std::optional<std::int64_t> microbatch;

    bool matches(const profiler::TraceEvent& e, const StageMatcher& isWorkOf = {}) const;
};

/// Parses `text`; nullopt when it names nothing (empty, or a word it does not know).
std::optional<EventQuery> parseEventQuery(const std::string& text);

/// Snapshot indices of the compute events `query` matches, in time order.
std::vector<std::size_t> findEvents(
    const profiler::TraceSnapshot& trace, const EventQuery& query, const StageMatcher& isWorkOf = {});

} // namespace bs::ui
