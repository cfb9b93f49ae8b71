#include "runtime/sim/rank_driver.h"

namespace bs::runtime {

Result<DriveStats> driveRank(const Schedule& schedule, int stage, ActionExecutor& executor, profiler::TraceStore& store,
                             const DriveOptions& options, const RankLinks& links)
{
    if (Status one = requireOneStagePerRank(schedule, "the per-process rank driver"); !one) {
        return one.error();
    }
    const int p = schedule.stages();
    const auto su = static_cast<std::size_t>(stage);
    DriveStats stats;
    stats.finalVersions = options.initialVersions.size() == static_cast<std::size_t>(p)
                              ? options.initialVersions
                              : std::vector<int>(static_cast<std::size_t>(p), 0);
    int version = stats.finalVersions[su];
    TimeNs lastEnd = links.now();
    for (const Action& a : schedule.programs[su]) {
        if (options.stop && options.stop->load(std::memory_order_relaxed)) {
            return makeError(ErrorCode::Cancelled, "run stopped", "rank " + std::to_string(stage) + " before " + toString(a));
        }
        if (const int from = senderOf(a, p); from >= 0) {
            if (Status in = links.receive(a, from); !in) {
                return in.error();
            }
        }
        const TimeNs start = links.now();
        Result<ActionOutcome> outcome = executor.perform(a);
        const TimeNs end = links.now();
        if (!outcome) {
            return atAction(outcome.error(), a);
        }
        if (const int to = receiverOf(a, p); to >= 0) {
            if (Status sent = links.send(a, to); !sent) {
                return sent.error();
            }
        }
        auto event = actionEvent(a, start, end, version, outcome->bytes);
        if (a.kind != ActionKind::Update) {
            event.microbatch += options.microbatchOffset;
        }
        if (a.kind == ActionKind::Update) {
            ++version;
        }
        store.append(event);
        lastEnd = end;
        ++stats.actions;
        if (links.recorded) {
            if (Status r = links.recorded(a, event); !r) {
                return r.error();
            }
        }
    }
    stats.makespan = lastEnd;
    stats.finalVersions[su] = version;
    return stats;
}

} // namespace bs::runtime
