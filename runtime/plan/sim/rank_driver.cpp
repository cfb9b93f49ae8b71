#include "runtime/plan/sim/rank_driver.h"

namespace bs::runtime {

Result<DriveStats> driveRank(const Schedule& schedule, int rank, ActionExecutor& executor, profiler::TraceStore& store,
    const DriveOptions& options, const RankLinks& links)
{
    if (rank < 0 || rank >= schedule.ranks()) {
        return makeError(ErrorCode::InvalidArgument, "rank " + std::to_string(rank) + " is not in the schedule",
            "allowed: 0.." + std::to_string(schedule.ranks() - 1));
    }
    const int stages = schedule.stages();
    const std::vector<int> chunkOf = chunkOfStage(schedule);
    DriveStats stats;
    stats.finalVersions = options.initialVersions.size() == static_cast<std::size_t>(stages)
        ? options.initialVersions
        : std::vector<int>(static_cast<std::size_t>(stages), 0);
    // A neighbour on another rank: tensors between two stages of this rank stay in memory.
    const auto elsewhere = [&](int stage) { return stage >= 0 && schedule.rankOf(stage) != rank; };
    TimeNs lastEnd = links.now();
    for (const Action& a : schedule.programs[static_cast<std::size_t>(rank)]) {
        if (options.stop && options.stop->load(std::memory_order_relaxed)) {
            return makeError(
                ErrorCode::Cancelled, "run stopped", "rank " + std::to_string(rank) + " before " + toString(a));
        }
        Status in = ok();
        forEachPart(a, [&](const Action& part) {
            if (const int from = senderOf(part, stages); in && elsewhere(from)) {
                in = links.receive(part, from);
            }
        });
        if (!in) {
            return in.error();
        }
        const TimeNs start = links.now();
        Result<ActionOutcome> outcome = executor.perform(a);
        const TimeNs end = links.now();
        if (!outcome) {
            return atAction(outcome.error(), a);
        }
        Status sent = ok();
        forEachPart(a, [&](const Action& part) {
            if (const int to = receiverOf(part, stages); sent && elsewhere(to)) {
                sent = links.send(part, to);
            }
        });
        if (!sent) {
            return sent.error();
        }
        // An overlapped pair is drawn as its forward then its backward half, as drive() does.
        const TimeNs middle = a.isOverlap() ? overlapHalves(start, end, outcome->forwardShare).first : end;
        Status noted = ok();
        forEachPart(a, [&](const Action& part) {
            const bool second = a.isOverlap() && part.kind == ActionKind::Backward;
            const auto su = static_cast<std::size_t>(part.stage);
            auto event = actionEvent(part, second ? middle : start, second ? end : middle, stats.finalVersions[su],
                second ? 0 : outcome->bytes);
            placeOnRank(event, part, schedule, chunkOf);
            if (part.kind != ActionKind::Update) {
                event.microbatch += options.microbatchOffset;
            } else {
                ++stats.finalVersions[su];
            }
            store.append(event);
            if (noted && links.recorded) {
                noted = links.recorded(part, event);
            }
        });
        lastEnd = end;
        ++stats.actions;
        if (!noted) {
            return noted.error();
        }
    }
    stats.makespan = lastEnd;
    return stats;
}

} // namespace bs::runtime
