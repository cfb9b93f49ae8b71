#include "runtime/plan/schedule/validate_rules.h"

namespace bs::runtime::detail {

bool passesInOneWalk(const Schedule& schedule)
{
    if (!lagBoundShape(schedule)) {
        return false;
    }
    const bool lagStated = !schedule.lagBound.empty();
    std::vector<RankRules> rules;
    std::vector<LagRule> lags;
    rules.reserve(static_cast<std::size_t>(schedule.ranks()));
    for (int r = 0; r < schedule.ranks(); ++r) {
        rules.emplace_back(schedule, r);
        if (lagStated) {
            lags.emplace_back(schedule, r);
        }
    }
    StreamOrder streams(schedule);
    Replay replay(schedule);
    // Each rank's actions reach its rules in program order, as checking rank by rank feeds them,
    // and a message's send before its receive (the receiver waits for it).
    const bool ran = replay.run([&](int r, int step, const Action& action) {
        const auto ru = static_cast<std::size_t>(r);
        if (!rules[ru].take(step, action) || (lagStated && !lags[ru].take(step, action))) {
            return false;
        }
        bool inOrder = true;
        forEachPart(action,
            [&](const Action& part) { inOrder = streams.sent(r, part) && streams.received(r, part) && inOrder; });
        return inOrder;
    });
    if (!ran || replay.stuckRank() >= 0) {
        return false;
    }
    for (RankRules& rank : rules) {
        if (!rank.finish()) {
            return false;
        }
    }
    return true;
}

} // namespace bs::runtime::detail
