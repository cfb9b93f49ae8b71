#pragma once
// Hand-made traces for the ui tests and the timeline benchmark.

#include "profiler/trace/trace_store.h"
#include "ui/timeline/timeline_index.h"

#include <memory>

namespace bs::ui::test {

/// One compute-lane event of `stage`.
profiler::TraceEvent traceEvent(
    int stage, profiler::EventKind kind, int mb, profiler::TimeNs start, profiler::TimeNs end, int version = 0);
/// A send on `stage`'s communication lane to lane `to` (its aux).
profiler::TraceEvent sendEvent(int stage, int to, int mb, profiler::TimeNs start, profiler::TimeNs end);

/// Two stages, compute lane only, times in ns:
///   stage 0: F0 [0,100) F1 [100,200) B0 [400,500) B1 [600,700)           (gap 200..400: dependency)
///   stage 1: F0 [100,200) B0 [200,300) F1 [300,400) B1 [400,500) U0 [500,550)
/// Trace range [0, 700): stage 1 has warm-up [0,100) and drain [550,700); stage 0 has
/// dependency gaps [200,400) and [500,600).
std::shared_ptr<const profiler::TraceSnapshot> twoStageTrace();

/// `count` events spread over `stages` stages: back-to-back F/B/W/U cycles of 1000 ns compute with
/// a 200 ns gap every fourth action, plus a comm lane send per forward. Deterministic.
std::shared_ptr<const profiler::TraceSnapshot> syntheticTrace(std::size_t count, int stages);

/// The index of `trace` painted with its one analysis's bubbles, under the trace meta's settings
/// (or `options` when given) — what the app does with a trace.
std::shared_ptr<const TimelineIndex> analysedIndex(std::shared_ptr<const profiler::TraceSnapshot> trace);
std::shared_ptr<const TimelineIndex> analysedIndex(
    std::shared_ptr<const profiler::TraceSnapshot> trace, const profiler::AnalysisOptions& options);
/// Options with only the flush rule and m set.
profiler::AnalysisOptions flushRule(bool synchronous, int microbatchesPerBatch);

} // namespace bs::ui::test
