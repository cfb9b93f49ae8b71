#include "bubblescope/paci/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace bs::paci {

double LrSchedule::lrAt(int updatesDone) const
{
    const int u = std::max(updatesDone + updatesOffset, 0);
    if (u < warmupSteps) {
        return peakLr * static_cast<double>(u + 1) / static_cast<double>(warmupSteps);
    }
    if (totalSteps <= warmupSteps) {
        return peakLr;
    }
    const double progress =
        std::min(1.0, static_cast<double>(u - warmupSteps) / static_cast<double>(totalSteps - warmupSteps));
    const double pi = std::acos(-1.0);
    const double cosine = 0.5 * (1.0 + std::cos(pi * progress));
    return peakLr * (minLrRatio + (1.0 - minLrRatio) * cosine);
}

} // namespace bs::paci
