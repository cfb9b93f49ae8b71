#pragma once
// A per-row, time-sorted index over one trace snapshot: the preprocessing step that makes culling
// and folding cheap (tracy's Preprocess; qt-creator's firstIndex/lastIndex). Built once per
// snapshot, off the paint path. Pure C++ (no Qt), immutable once built, safe to share across threads.

#include "profiler/analysis/analyze.h"
#include "profiler/trace/trace_store.h"
#include "ui/common/color_role.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "base/time.h"

namespace bs::ui {

/// One horizontal row of the timeline: a stage's compute, communication or kernel sub-lane.
struct TimelineRow
{
    int stage = 0;
    profiler::Lane lane = profiler::Lane::Compute;
};

/// Intervals of one row, sorted by start, as parallel arrays (cache-friendly for the cull loop).
struct RowItems
{
    std::vector<TimeNs> start;
    std::vector<TimeNs> end;
    std::vector<ColorRole> role;
    std::vector<std::int32_t> label; ///< micro-batch (update index for U), -1 for none
    std::vector<std::uint32_t> source; ///< event index in the snapshot, or bubble index
    TimeNs maxDuration = 0; ///< lets the cull start at start >= viewStart - maxDuration

    std::size_t size() const { return start.size(); }
    void push(TimeNs s, TimeNs e, ColorRole r, std::int32_t l, std::uint32_t src);
};

/// An idle gap on a stage's compute lane and why it happened (profiler/analysis attributes it).
using BubbleSpan = profiler::BubbleSpan;

/// Analysis options from the trace's meta attributes alone (`microbatches`, `synchronous` or
/// `weights` = flush), for a trace that comes without its run's settings.
profiler::AnalysisOptions analysisOptionsFromMeta(const profiler::TraceMeta& meta);

class TimelineIndex
{
public:
    /// Indexes `snapshot` (may be null or empty) with the bubbles its analysis attributed
    /// (profiler::analyze()'s Report::bubbles: the index does not analyse again). O(n log n);
    /// about 0.1 s for 10^6 events.
    static std::shared_ptr<const TimelineIndex> build(
        std::shared_ptr<const profiler::TraceSnapshot> snapshot, std::vector<BubbleSpan> bubbles = {});

    const profiler::TraceSnapshot* snapshot() const { return m_snapshot.get(); }
    int stages() const { return m_stages; }
    const std::vector<TimelineRow>& rows() const { return m_rows; }
    const RowItems& events(std::size_t row) const { return m_events[row]; }
    /// Bubbles live on compute rows only; other rows have an empty list.
    const RowItems& bubbles(std::size_t row) const { return m_bubbleItems[row]; }
    const std::vector<BubbleSpan>& bubbleSpans() const { return m_bubbles; }
    TimeNs startTime() const { return m_start; }
    TimeNs endTime() const { return m_end; }
    std::size_t eventCount() const;

    /// Version lag of snapshot event `eventIndex` (B/I only: the stage's version at the backward
    /// minus the version its forward saw); nullopt for other kinds or when the forward is missing.
    std::optional<int> versionLag(std::size_t eventIndex) const;

    /// The item of `row` covering `timeNs`, or within `slackNs` of it (nearest wins).
    std::optional<std::size_t> hitEvent(std::size_t row, TimeNs timeNs, TimeNs slackNs) const;
    std::optional<std::size_t> hitBubble(std::size_t row, TimeNs timeNs) const;

private:
    void addBubbles(std::vector<BubbleSpan> bubbles, const std::vector<int>& computeRowOfStage);

    std::shared_ptr<const profiler::TraceSnapshot> m_snapshot;
    int m_stages = 0;
    std::vector<TimelineRow> m_rows;
    std::vector<RowItems> m_events;
    std::vector<RowItems> m_bubbleItems;
    std::vector<BubbleSpan> m_bubbles;
    std::vector<std::int16_t> m_lag; ///< per snapshot event; INT16_MIN = not applicable
    TimeNs m_start = 0;
    TimeNs m_end = 0;
};

} // namespace bs::ui
