#include "runtime/plan/schedule/schedule.h"

#include <algorithm>

namespace bs::runtime {

std::string_view weightPolicyName(WeightPolicy policy)
{
    switch (policy) {
    case WeightPolicy::Flush:
        return "flush";
    case WeightPolicy::Stash:
        return "stash";
    case WeightPolicy::TwoVersions:
        return "two-versions";
    case WeightPolicy::InPlace:
        return "in-place";
    }
    return "unknown";
}

std::string_view placementName(Placement placement)
{
    switch (placement) {
    case Placement::OnePerRank:
        return "one-per-rank";
    case Placement::Loop:
        return "loop";
    case Placement::V:
        return "v";
    }
    return "unknown";
}

std::optional<Placement> placementFromName(std::string_view name)
{
    for (Placement p : {Placement::OnePerRank, Placement::Loop, Placement::V}) {
        if (placementName(p) == name) {
            return p;
        }
    }
    return std::nullopt;
}

std::vector<int> rankOfStageFor(Placement placement, int ranks, int stagesPerRank)
{
    const int total = ranks * stagesPerRank;
    std::vector<int> rank(static_cast<std::size_t>(std::max(total, 0)));
    for (int i = 0; i < total; ++i) {
        const int lap = i / ranks;
        const int within = i % ranks;
        // V: even laps run down the ranks, odd laps back up (PyTorch's generate_stage_to_rank_mapping).
        rank[static_cast<std::size_t>(i)] = placement == Placement::V && lap % 2 == 1 ? ranks - 1 - within : within;
    }
    return rank;
}

std::size_t Schedule::actionCount() const
{
    std::size_t n = 0;
    for (const auto& program : programs) {
        n += program.size();
    }
    return n;
}

} // namespace bs::runtime
