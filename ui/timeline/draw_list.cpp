#include "ui/timeline/draw_list.h"

#include <algorithm>
#include <array>

namespace bs::ui {

namespace {

/// Role covering the most time among items [first, last).
ColorRole dominantRole(const RowItems& items, std::size_t first, std::size_t last)
{
    std::array<TimeNs, kColorRoleCount> time{};
    for (std::size_t i = first; i < last; ++i) {
        time[static_cast<std::size_t>(items.role[i])] += std::max<TimeNs>(1, items.end[i] - items.start[i]);
    }
    const auto best = std::max_element(time.begin(), time.end());
    return static_cast<ColorRole>(best - time.begin());
}

} // namespace

std::pair<std::size_t, std::size_t> foldRow(const RowItems& items, std::uint32_t row, const TimelineCoordinates& coords,
    const DrawListParams& params, std::vector<DrawRect>& out)
{
    const std::size_t n = items.size();
    if (n == 0 || coords.widthPx() <= 0) {
        return {0, 0};
    }
    const double viewStart = coords.viewStart();
    const double viewEnd = coords.viewEnd();
    const double minPx = std::max(0.5, params.minBlockPx);
    // First candidate: nothing starting before viewStart - maxDuration can reach into the window.
    const auto lowT = static_cast<TimeNs>(viewStart) - items.maxDuration;
    std::size_t i =
        static_cast<std::size_t>(std::lower_bound(items.start.begin(), items.start.end(), lowT) - items.start.begin());
    std::size_t visible = 0;
    std::size_t folded = 0;
    while (i < n && static_cast<double>(items.start[i]) < viewEnd) {
        if (static_cast<double>(items.end[i]) <= viewStart) {
            ++i;
            continue;
        }
        const double x0 = coords.toPx(static_cast<double>(items.start[i]));
        const double x1 = coords.toPx(static_cast<double>(items.end[i]));
        if (x1 - x0 >= minPx) {
            out.push_back({static_cast<float>(x0), static_cast<float>(x1 - x0), row, items.role[i], items.label[i], 1,
                static_cast<std::uint32_t>(i), items.chunk[i]});
            ++visible;
            ++i;
            continue;
        }
        // Fold every interval that starts within minPx of this one: jump there by binary search.
        const auto limitT = static_cast<TimeNs>(coords.toTime(x0 + minPx));
        const auto j = static_cast<std::size_t>(
            std::lower_bound(items.start.begin() + static_cast<std::ptrdiff_t>(i) + 1, items.start.end(), limitT)
            - items.start.begin());
        const std::size_t last = std::max(j, i + 1);
        const std::size_t count = last - i;
        TimeNs endT = items.end[i];
        // Items are sorted by start; on a lane they rarely overlap, so the last one ends the fold.
        endT = std::max(endT, items.end[last - 1]);
        const double w = std::max(coords.toPx(static_cast<double>(endT)) - x0, count > 1 ? minPx : 1.0);
        const ColorRole role = count > 1 ? dominantRole(items, i, last) : items.role[i];
        out.push_back({static_cast<float>(x0), static_cast<float>(w), row, role, count > 1 ? -1 : items.label[i],
            static_cast<std::uint32_t>(count), static_cast<std::uint32_t>(i), items.chunk[i]});
        visible += count;
        folded += count > 1 ? count : 0;
        i = last;
    }
    return {visible, folded};
}

DrawList buildDrawList(const TimelineIndex& index, const TimelineCoordinates& coords, const DrawListParams& params)
{
    DrawList list;
    const auto rows = static_cast<std::uint32_t>(index.rows().size());
    for (std::uint32_t r = 0; r < rows; ++r) {
        foldRow(index.bubbles(r), r, coords, params, list.bubbles);
        const auto [visible, folded] = foldRow(index.events(r), r, coords, params, list.blocks);
        list.visibleEvents += visible;
        list.foldedEvents += folded;
    }
    return list;
}

} // namespace bs::ui
