#include "ui/timeline/transfer_arrows.h"

#include <algorithm>

namespace bs::ui {

std::vector<TransferArrow> transferArrows(
    const TimelineIndex& index, const TimelineCoordinates& coords, std::size_t limit)
{
    std::vector<TransferArrow> arrows;
    const profiler::TraceSnapshot* snapshot = index.snapshot();
    if (!snapshot || coords.widthPx() <= 0) {
        return arrows;
    }
    // Lane (stage, or rank on multi-stage traces: sends name lanes either way) -> its compute row.
    const auto& rows = index.rows();
    std::vector<int> computeRow(static_cast<std::size_t>(std::max(0, index.stages())), -1);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto lane = static_cast<std::size_t>(rows[r].stage);
        if (rows[r].lane == profiler::Lane::Compute && lane < computeRow.size()) {
            computeRow[lane] = static_cast<int>(r);
        }
    }
    const double viewStart = coords.viewStart();
    const double viewEnd = coords.viewEnd();
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (rows[r].lane != profiler::Lane::Comm) {
            continue;
        }
        const RowItems& items = index.events(r);
        const auto lowT = static_cast<TimeNs>(viewStart) - items.maxDuration;
        auto i = static_cast<std::size_t>(
            std::lower_bound(items.start.begin(), items.start.end(), lowT) - items.start.begin());
        for (; i < items.size() && static_cast<double>(items.start[i]) <= viewEnd; ++i) {
            if (static_cast<double>(items.end[i]) < viewStart || items.source[i] >= snapshot->size()) {
                continue;
            }
            const profiler::TraceEvent& e = (*snapshot)[items.source[i]];
            if (e.kind != profiler::EventKind::Send || e.aux >= computeRow.size() || computeRow[e.aux] < 0) {
                continue;
            }
            if (arrows.size() == limit) {
                return {};
            }
            arrows.push_back({static_cast<std::uint32_t>(r), coords.toPx(static_cast<double>(e.start)),
                static_cast<std::uint32_t>(computeRow[e.aux]), coords.toPx(static_cast<double>(e.end))});
        }
    }
    return arrows;
}

} // namespace bs::ui
