#pragma once
// Compute, then paint: buildDrawList() culls a TimelineIndex to the visible window and folds
// sub-pixel intervals into one rectangle (level of detail), so the painter only replays a list
// whose length is bounded by the pixels on screen, not by the events in the trace.
// Pure C++ (no Qt): tested as data.

#include "ui/timeline/coordinates.h"
#include "ui/timeline/timeline_index.h"

#include <cstdint>
#include <vector>

namespace bs::ui {

/// One rectangle to fill, in event-area pixels (x from the left edge of the event area).
struct DrawRect
{
    float x = 0;
    float w = 0;
    std::uint32_t row = 0;
    ColorRole role = ColorRole::Forward;
    std::int32_t label = -1; ///< micro-batch to print when it fits; -1 for folded or unlabelled
    std::uint32_t count = 1; ///< intervals represented (> 1: folded)
    std::uint32_t item = 0; ///< first item index in the row (events or bubbles)
    std::uint8_t chunk = 0; ///< which of its rank's stages (the first item's when folded)

    bool folded() const { return count > 1; }
};

struct DrawListParams
{
    /// Intervals narrower than this are folded with their neighbours into one rectangle that is at
    /// least this wide (px). 2 px keeps folded regions visible without overdrawing.
    double minBlockPx = 2.0;
};

struct DrawList
{
    std::vector<DrawRect> bubbles; ///< drawn first (behind)
    std::vector<DrawRect> blocks; ///< actions, sends, kernels
    std::size_t visibleEvents = 0; ///< events intersecting the window
    std::size_t foldedEvents = 0; ///< of those, drawn inside folded rectangles
};

/// Culls and folds every row of `index` for the window in `coords`. A folded rectangle takes the
/// role holding the most time inside it. O(rows · (pixels + log n) + folded events).
DrawList buildDrawList(
    const TimelineIndex& index, const TimelineCoordinates& coords, const DrawListParams& params = {});

/// The same for one row's items (exposed for tests). Appends to `out`; returns (visible, folded).
std::pair<std::size_t, std::size_t> foldRow(const RowItems& items, std::uint32_t row, const TimelineCoordinates& coords,
    const DrawListParams& params, std::vector<DrawRect>& out);

} // namespace bs::ui
