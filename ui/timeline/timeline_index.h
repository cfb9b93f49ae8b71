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
    /// Which of its rank's stages an action belongs to (0 when a rank holds one stage).
    std::vector<std::uint8_t> chunk;
    TimeNs maxDuration = 0; ///< lets the cull start at start >= viewStart - maxDuration

    std::size_t size() const { return start.size(); }
    void push(TimeNs s, TimeNs e, ColorRole r, std::int32_t l, std::uint32_t src, std::uint8_t c = 0);
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
    /// Lanes: one per stage, or one per rank when a rank holds several stages (stagesPerRank() > 1).
    int stages() const { return m_stages; }
    /// v: the trace's `stages_per_rank` attribute (interleaved-1f1b, zb-v, dualpipev, ...); 1 without it.
    int stagesPerRank() const { return m_stagesPerRank; }
    /// The model stage that chunk `chunk` of rank `rank` holds, from the trace's `placement`
    /// attribute through runtime::rankOfStageFor ("loop": c·p + r; "v": r, then 2p − 1 − r); -1 unknown.
    int stageOfChunk(int rank, int chunk) const;
    /// Who owns lane `lane` of an imported job (a lane per model stage): the rank whose trace it
    /// came from and which of that rank's stages it is, from the `rank.R.stages` attributes.
    /// nullopt for traces with a lane per rank (the runtime's, the simulator's) or without them.
    struct LaneOwner
    {
        int rank = 0;
        int chunk = 0;
        int chunks = 1; ///< stages the rank holds
    };
    std::optional<LaneOwner> laneOwner(int lane) const;
    /// The chunk of compute event `e` (its `aux` on a multi-stage rank; 0 otherwise).
    int chunkOf(const profiler::TraceEvent& e) const;
    /// Whether `e` is work of model stage `stage` (the find box's "stage N"): its chunk on its rank
    /// holds that stage. An update on a multi-stage rank carries no chunk, so it counts for every
    /// stage its rank holds; with one stage per lane (or an unknown placement) the lane is the stage.
    bool isWorkOfStage(const profiler::TraceEvent& e, std::size_t stage) const;
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
    int m_stagesPerRank = 1;
    std::vector<int> m_stageOfChunk; ///< [rank · v + chunk]: the model stage; empty = unknown placement
    std::vector<std::optional<LaneOwner>> m_laneOwner; ///< per lane of an imported job; empty otherwise
    std::vector<TimelineRow> m_rows;
    std::vector<RowItems> m_events;
    std::vector<RowItems> m_bubbleItems;
    std::vector<BubbleSpan> m_bubbles;
    std::vector<std::int16_t> m_lag; ///< per snapshot event; INT16_MIN = not applicable
    TimeNs m_start = 0;
    TimeNs m_end = 0;
};

} // namespace bs::ui
