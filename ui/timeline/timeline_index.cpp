#include "ui/timeline/timeline_index.h"

#include "runtime/plan/schedule/schedule.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace bs::ui {

using profiler::EventKind;
using profiler::Lane;
using profiler::TraceEvent;

namespace {

constexpr std::int16_t kNoLag = std::numeric_limits<std::int16_t>::min();
constexpr int kLaneCount = 3;

} // namespace

void RowItems::push(TimeNs s, TimeNs e, ColorRole r, std::int32_t l, std::uint32_t src, std::uint8_t c)
{
    start.push_back(s);
    end.push_back(e);
    role.push_back(r);
    label.push_back(l);
    source.push_back(src);
    chunk.push_back(c);
    maxDuration = std::max(maxDuration, e - s);
}

profiler::AnalysisOptions analysisOptionsFromMeta(const profiler::TraceMeta& meta)
{
    bool synchronous = false;
    int microbatches = 0;
    if (auto it = meta.attributes.find("synchronous"); it != meta.attributes.end()) {
        synchronous = it->second == "true" || it->second == "1";
    } else if (auto weights = meta.attributes.find("weights"); weights != meta.attributes.end()) {
        synchronous = weights->second == "flush"; // the simulator's weight policy name
    }
    if (auto it = meta.attributes.find("microbatches"); it != meta.attributes.end()) {
        microbatches = std::atoi(it->second.c_str());
    }
    profiler::AnalysisOptions options;
    options.synchronous = synchronous && microbatches > 0; // m unknown: no flush attribution
    options.microbatchesPerBatch = std::max(1, microbatches);
    return options;
}

std::shared_ptr<const TimelineIndex> TimelineIndex::build(
    std::shared_ptr<const profiler::TraceSnapshot> snapshot, std::vector<BubbleSpan> bubbles)
{
    auto index = std::make_shared<TimelineIndex>();
    index->m_snapshot = std::move(snapshot);
    const profiler::TraceSnapshot* snap = index->m_snapshot.get();
    if (!snap) {
        return index;
    }
    const std::size_t n = snap->size();
    int stages = snap->meta().stages;
    std::vector<std::array<bool, kLaneCount>> lanesUsed;
    TimeNs lo = std::numeric_limits<TimeNs>::max();
    TimeNs hi = 0;
    snap->forEach([&](const TraceEvent& e) {
        stages = std::max(stages, static_cast<int>(e.stage) + 1);
        lo = std::min(lo, e.start);
        hi = std::max(hi, e.end);
    });
    index->m_stages = stages;
    const auto& attributes = snap->meta().attributes;
    index->m_stagesPerRank = std::clamp(snap->meta().stagesPerLane, 1, profiler::kMaxStagesPerLane);
    if (auto it = attributes.find("placement"); it != attributes.end() && index->m_stagesPerRank > 1) {
        // Chunk c of a rank is its c-th stage in stage order (as the scheduler core tags it).
        if (const auto placement = runtime::placementFromName(it->second)) {
            const auto rankOf = runtime::rankOfStageFor(*placement, stages, index->m_stagesPerRank);
            const auto v = static_cast<std::size_t>(index->m_stagesPerRank);
            index->m_stageOfChunk.assign(static_cast<std::size_t>(stages) * v, -1);
            std::vector<std::size_t> held(static_cast<std::size_t>(stages), 0);
            for (std::size_t s = 0; s < rankOf.size(); ++s) {
                const auto r = static_cast<std::size_t>(rankOf[s]);
                if (r < held.size() && held[r] < v) {
                    index->m_stageOfChunk[r * v + held[r]++] = static_cast<int>(s);
                }
            }
        }
    }
    // An imported job: lane = model stage, and "rank.R.stages" = "s0,s1,..." says who ran it.
    for (const auto& [key, value] : attributes) {
        if (key.rfind("rank.", 0) != 0 || key.size() < 12 || key.compare(key.size() - 7, 7, ".stages") != 0) {
            continue;
        }
        const int rank = std::atoi(key.c_str() + 5);
        std::vector<int> held;
        for (std::size_t at = 0; at < value.size();) {
            const std::size_t comma = std::min(value.find(',', at), value.size());
            held.push_back(std::atoi(value.substr(at, comma - at).c_str()));
            at = comma + 1;
        }
        for (std::size_t c = 0; c < held.size(); ++c) {
            if (held[c] >= 0 && held[c] < stages) {
                index->m_laneOwner.resize(static_cast<std::size_t>(stages));
                index->m_laneOwner[static_cast<std::size_t>(held[c])] =
                    LaneOwner{rank, static_cast<int>(c), static_cast<int>(held.size())};
            }
        }
    }
    index->m_start = n == 0 ? 0 : lo;
    index->m_end = n == 0 ? 0 : hi;
    lanesUsed.assign(static_cast<std::size_t>(stages), {true, false, false});
    snap->forEach([&](const TraceEvent& e) { lanesUsed[e.stage][static_cast<std::size_t>(e.lane)] = true; });

    // Rows: compute, then comm and kernel sub-lanes where the stage has such events.
    std::vector<std::array<int, kLaneCount>> rowOf(static_cast<std::size_t>(stages), {-1, -1, -1});
    for (int s = 0; s < stages; ++s) {
        for (int l = 0; l < kLaneCount; ++l) {
            if (lanesUsed[static_cast<std::size_t>(s)][static_cast<std::size_t>(l)]) {
                rowOf[static_cast<std::size_t>(s)][static_cast<std::size_t>(l)] =
                    static_cast<int>(index->m_rows.size());
                index->m_rows.push_back({s, static_cast<Lane>(l)});
            }
        }
    }
    std::vector<std::vector<std::uint32_t>> perRow(index->m_rows.size());
    for (std::size_t i = 0; i < n; ++i) {
        const TraceEvent& e = (*snap)[i];
        perRow[static_cast<std::size_t>(rowOf[e.stage][static_cast<std::size_t>(e.lane)])].push_back(
            static_cast<std::uint32_t>(i));
    }
    index->m_events.resize(index->m_rows.size());
    index->m_bubbleItems.resize(index->m_rows.size());
    index->m_lag.assign(n, kNoLag);
    for (std::size_t r = 0; r < perRow.size(); ++r) {
        auto& ids = perRow[r];
        std::stable_sort(ids.begin(), ids.end(),
            [snap](std::uint32_t a, std::uint32_t b) { return (*snap)[a].start < (*snap)[b].start; });
        RowItems& items = index->m_events[r];
        items.start.reserve(ids.size());
        // Keyed by (chunk, micro-batch): a rank's chunks forward the same micro-batch, each at
        // its own stage's weight version.
        std::unordered_map<std::int64_t, std::int32_t> forwardVersion;
        for (std::uint32_t id : ids) {
            const TraceEvent& e = (*snap)[id];
            const bool labelled = e.kind != EventKind::Marker && e.kind != EventKind::Kernel;
            const int chunk = index->chunkOf(e);
            items.push(
                e.start, e.end, roleOf(e.kind), labelled ? e.microbatch : -1, id, static_cast<std::uint8_t>(chunk));
            if (e.lane != Lane::Compute) {
                continue;
            }
            const std::int64_t key = static_cast<std::int64_t>(e.microbatch) * 256 + chunk;
            if (e.kind == EventKind::Forward) {
                forwardVersion[key] = e.version;
            } else if (e.kind == EventKind::Backward || e.kind == EventKind::BackwardInput) {
                if (auto it = forwardVersion.find(key); it != forwardVersion.end()) {
                    index->m_lag[id] = static_cast<std::int16_t>(std::clamp(e.version - it->second, -32767, 32767));
                }
            }
        }
    }
    std::vector<int> computeRow(static_cast<std::size_t>(stages));
    for (int st = 0; st < stages; ++st) {
        computeRow[static_cast<std::size_t>(st)] = rowOf[static_cast<std::size_t>(st)][0];
    }
    index->addBubbles(std::move(bubbles), computeRow);
    return index;
}

// The bubbles are profiler/analysis's spans (warm-up, drain, flush, dependency and comm waits told
// apart by the transfers on the comm lanes), so the tints match the charts' and tables' figures.
void TimelineIndex::addBubbles(std::vector<BubbleSpan> bubbles, const std::vector<int>& computeRowOfStage)
{
    m_bubbles = std::move(bubbles);
    for (std::size_t i = 0; i < m_bubbles.size(); ++i) {
        const BubbleSpan& b = m_bubbles[i];
        if (b.stage < 0 || static_cast<std::size_t>(b.stage) >= computeRowOfStage.size()) {
            continue; // not a stage of this trace
        }
        const int row = computeRowOfStage[static_cast<std::size_t>(b.stage)];
        m_bubbleItems[static_cast<std::size_t>(row)].push(b.start, b.end, roleOf(b.cause), -1, static_cast<std::uint32_t>(i));
    }
}

int TimelineIndex::chunkOf(const TraceEvent& e) const
{
    if (m_stagesPerRank <= 1 || e.lane != Lane::Compute) {
        return 0;
    }
    switch (e.kind) {
    case EventKind::Forward:
    case EventKind::Backward:
    case EventKind::BackwardInput:
    case EventKind::BackwardWeight:
        return std::min<int>(e.aux, m_stagesPerRank - 1); // the core's chunk tag
    default:
        return 0; // updates count micro-batches in aux; markers and kernels have no chunk
    }
}

bool TimelineIndex::isWorkOfStage(const TraceEvent& e, std::size_t stage) const
{
    if (m_stagesPerRank <= 1 || m_stageOfChunk.empty()) {
        return e.stage == stage;
    }
    const auto is = [&](int chunk) { return stageOfChunk(e.stage, chunk) == static_cast<int>(stage); };
    switch (e.kind) {
    case EventKind::Forward:
    case EventKind::Backward:
    case EventKind::BackwardInput:
    case EventKind::BackwardWeight:
        return is(chunkOf(e));
    default:
        for (int c = 0; c < m_stagesPerRank; ++c) {
            if (is(c)) {
                return true;
            }
        }
        return false;
    }
}

std::optional<TimelineIndex::LaneOwner> TimelineIndex::laneOwner(int lane) const
{
    if (lane < 0 || static_cast<std::size_t>(lane) >= m_laneOwner.size()) {
        return std::nullopt;
    }
    return m_laneOwner[static_cast<std::size_t>(lane)];
}

int TimelineIndex::stageOfChunk(int rank, int chunk) const
{
    if (rank < 0 || rank >= m_stages || chunk < 0 || chunk >= m_stagesPerRank) {
        return -1;
    }
    if (m_stagesPerRank == 1) {
        return rank;
    }
    const auto at =
        static_cast<std::size_t>(rank) * static_cast<std::size_t>(m_stagesPerRank) + static_cast<std::size_t>(chunk);
    return at < m_stageOfChunk.size() ? m_stageOfChunk[at] : -1;
}

std::size_t TimelineIndex::eventCount() const
{
    return m_snapshot ? m_snapshot->size() : 0;
}

std::optional<int> TimelineIndex::versionLag(std::size_t eventIndex) const
{
    if (eventIndex >= m_lag.size() || m_lag[eventIndex] == kNoLag) {
        return std::nullopt;
    }
    return m_lag[eventIndex];
}

namespace {

std::optional<std::size_t> nearest(const RowItems& items, TimeNs t, TimeNs slack)
{
    if (items.size() == 0) {
        return std::nullopt;
    }
    auto first = std::lower_bound(items.start.begin(), items.start.end(), t - items.maxDuration - slack);
    auto last = std::upper_bound(items.start.begin(), items.start.end(), t + slack);
    std::optional<std::size_t> best;
    TimeNs bestDistance = slack + 1;
    for (auto it = first; it != last; ++it) {
        const auto i = static_cast<std::size_t>(it - items.start.begin());
        const TimeNs distance = t < items.start[i] ? items.start[i] - t : (t > items.end[i] ? t - items.end[i] : 0);
        if (distance < bestDistance) {
            bestDistance = distance;
            best = i;
        }
    }
    return best;
}

} // namespace

std::optional<std::size_t> TimelineIndex::hitEvent(std::size_t row, TimeNs timeNs, TimeNs slackNs) const
{
    if (row >= m_events.size()) {
        return std::nullopt;
    }
    return nearest(m_events[row], timeNs, std::max<TimeNs>(0, slackNs));
}

std::optional<std::size_t> TimelineIndex::hitBubble(std::size_t row, TimeNs timeNs) const
{
    if (row >= m_bubbleItems.size()) {
        return std::nullopt;
    }
    return nearest(m_bubbleItems[row], timeNs, 0);
}

} // namespace bs::ui
