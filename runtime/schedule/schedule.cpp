#include "runtime/schedule/schedule.h"

namespace bs::runtime {

std::string_view weightPolicyName(WeightPolicy policy)
{
    switch (policy) {
    case WeightPolicy::Flush: return "flush";
    case WeightPolicy::Stash: return "stash";
    case WeightPolicy::TwoVersions: return "two-versions";
    case WeightPolicy::InPlace: return "in-place";
    }
    return "unknown";
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
