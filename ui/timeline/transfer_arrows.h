#pragma once
// Arrows between matched sends and receives: from a send's start on its sender's communication row
// to its arrival on the receiver's compute row (the flow events of Perfetto and chrome://tracing).
// Pure C++ (no Qt): which arrows a window shows is computed and tested as data; the view draws them.

#include "ui/timeline/coordinates.h"
#include "ui/timeline/timeline_index.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bs::ui {

/// About two arrows per 10 px of a 1 600 px timeline: readable, and cheap to paint.
inline constexpr std::size_t kMaxTransferArrows = 300;

struct TransferArrow
{
    std::uint32_t fromRow = 0; ///< the sender's communication row
    double fromPx = 0; ///< the send's start (px from the event area's left edge)
    std::uint32_t toRow = 0; ///< the receiver's compute row
    double toPx = 0; ///< the arrival
};

/// Arrows of the sends whose [start, end] meets the window of `coords`, in row order. Empty when
/// more than `limit` sends are visible: at that density arrows are a grey smear that hides the
/// actions, so (as in Perfetto) they appear once the user zooms in. A send whose destination lane
/// has no compute row (a hand-edited trace) gets no arrow.
std::vector<TransferArrow> transferArrows(
    const TimelineIndex& index, const TimelineCoordinates& coords, std::size_t limit = kMaxTransferArrows);

} // namespace bs::ui
