#pragma once
// Internal to the validator: its per-rank rules as checkers fed one step at a time, and the replay
// that finds deadlocks. validate() checks them one after another (the first violation in that
// order is the one it reports), and first all of them in one walk (validate_walk.cpp): a long
// schedule is hundreds of MB, and five walks of it from main memory were what made validation's
// time per action grow with the schedule (issue #15).

#include "base/flat_count_map.h"
#include "runtime/plan/schedule/schedule.h"

#include <optional>
#include <string>
#include <vector>

namespace bs::runtime::detail {

/// "stage r, step n (action): why" with the grid around that step.
Error violation(const Schedule& schedule, int rank, int step, const std::string& why);

/// The rules of one rank's program (checkRank): order of F, B/I, W and U for every micro-batch of
/// each of the rank's stages, the rank's in-flight bound (all its stages together), the stated
/// activation-memory and weight-version bounds, and for flush schedules that a batch's forwards on
/// a stage wait for that stage's update of the previous batch.
class RankRules
{
public:
    RankRules(const Schedule& schedule, int rank);

    /// The rank's `step`-th action, steps in program order. False at the first violation.
    bool take(int step, const Action& action);
    /// After the whole program: every micro-batch of every stage the rank holds did F, B (or I and
    /// W) and was applied by an update. False otherwise.
    bool finish();
    /// The violation take() or finish() found.
    const Status& failure() const { return m_failure; }

private:
    struct MicrobatchState
    {
        bool forward = false;
        bool inputGrad = false; // B or I done
        bool weightGrad = false; // B or W done
        bool applied = false; // covered by an update
    };

    bool takePart(int step, const Action& a);
    bool takeUpdate(int step, const Action& a);
    bool checkVersions(int step);
    bool fail(int step, const std::string& why);
    MicrobatchState& state(int stage, int mb)
    {
        return m_mbs[static_cast<std::size_t>(m_local[static_cast<std::size_t>(stage)]) * m_total
            + static_cast<std::size_t>(mb)];
    }

    const Schedule& m_schedule;
    int m_rank;
    int m_stageCount;
    std::size_t m_total;
    // State for this rank's stages only (local index), so p ranks cost p·v·total, not p·p·v·total.
    std::vector<int> m_local;
    std::vector<MicrobatchState> m_mbs;
    int m_bound;
    int m_inflight = 0;
    // Activation memory as the schedule's authors count it: F until the W (or B) that frees it.
    bool m_memoryStated;
    int m_memoryBound;
    int m_live = 0;
    std::vector<int> m_updatedBatches; // flush: per stage
    // Stash policies: the weight versions this rank must hold are the current one and every
    // version an in-flight micro-batch was forwarded with (its backward runs on that version).
    bool m_stashes;
    int m_versionBound;
    int m_version = 0; // updates this rank has applied so far
    std::vector<int> m_forwardVersion;
    FlatCountMap m_heldVersions; // forward version -> in-flight micro-batches forwarded on it
    // Set by the first violation: a Status per action is a variant with two strings to build,
    // test and destroy.
    Status m_failure = ok();
};

/// The stated version-lag bound (Schedule::lagBound) on one rank: per stage, the updates of that
/// stage between each micro-batch's forward and the start of its backward (B or I), counted in the
/// rank's program order, which is the order every executor runs a rank's actions in. An overlapped
/// pair's forward comes before its backward half. Actions RankRules refuses are skipped.
class LagRule
{
public:
    /// `schedule.lagBound` holds one bound per stage (lagBoundShape() said so).
    LagRule(const Schedule& schedule, int rank);

    /// The rank's `step`-th action, steps in program order. False at the first violation.
    bool take(int step, const Action& action);
    const Status& failure() const { return m_failure; }

private:
    bool takePart(int step, const Action& a);

    const Schedule& m_schedule;
    int m_rank;
    std::size_t m_total;
    std::vector<int> m_local; // this rank's stages only, as RankRules
    std::vector<int> m_updates; // per local stage, so far
    std::vector<int> m_forwardedAt; // [local stage · total + mb]: its stage's updates at its forward
    Status m_failure = ok();
};

/// ok() when the schedule states no lag bound or one per stage; the error otherwise.
Status lagBoundShape(const Schedule& schedule);

/// Every rule above in one walk, the replay's: each rank's RankRules and LagRule and the stream
/// order fed as the replay runs its actions. True when the schedule passes them all, which is then
/// what checking them one by one finds; false when any fails, and validate() checks them one by
/// one to name the first violation in their order.
bool passesInOneWalk(const Schedule& schedule);
/// The checks one by one, each over the whole schedule: the placement, each rank's RankRules then
/// LagRule, the replay, the stream order. The first violation in that order, or ok().
Status validateStepByStep(const Schedule& schedule);

/// Where each transfer between two ranks stands in its stream (one per direction and kind, as a
/// point-to-point channel keeps them): the check that a receiver takes a stream's messages in the
/// order its sender sent them, for a schedule the rank rules accept (each message sent once).
/// Senders' actions go to sent() in each rank's program order, receivers' to received() likewise,
/// each receive after its message's send.
class StreamOrder
{
public:
    explicit StreamOrder(const Schedule& schedule);

    /// `a`, a plain action of `rank`: if it sends to another rank, the message's place in its
    /// stream. False if that message was sent before.
    bool sent(int rank, const Action& a)
    {
        const bool f = a.kind == ActionKind::Forward;
        const int to = f ? a.stage + 1 : a.stage - 1;
        if ((!f && !a.isBackwardLike()) || to < 0 || to >= m_stages || m_schedule.rankOf(to) == rank) {
            return true;
        }
        int& at = position(!f, a.stage, a.microbatch);
        const bool first = at == -1;
        at = stream(m_sent, !f, rank, m_schedule.rankOf(to))++;
        return first;
    }
    /// `a`, a plain action of `rank`: if it takes a message from another rank, whether that message
    /// is the next its stream delivers. A message not sent is the dependency check's to report.
    bool received(int rank, const Action& a)
    {
        const bool f = a.kind == ActionKind::Forward;
        const int from = f ? a.stage - 1 : a.stage + 1;
        if ((!f && !a.isBackwardLike()) || from < 0 || from >= m_stages || m_schedule.rankOf(from) == rank) {
            return true;
        }
        const int fromRank = m_schedule.rankOf(from);
        const int i = stream(m_received, !f, fromRank, rank)++;
        return i >= stream(m_sent, !f, fromRank, rank) || position(!f, from, a.microbatch) == i;
    }

private:
    int& position(bool gradient, int fromStage, int mb)
    {
        return m_position[(static_cast<std::size_t>(gradient) * static_cast<std::size_t>(m_stages)
                              + static_cast<std::size_t>(fromStage))
                * m_total
            + static_cast<std::size_t>(mb)];
    }
    int& stream(std::vector<int>& counts, bool gradient, int from, int to)
    {
        return counts[(static_cast<std::size_t>(gradient) * m_ranks + static_cast<std::size_t>(from)) * m_ranks
            + static_cast<std::size_t>(to)];
    }

    const Schedule& m_schedule;
    int m_stages;
    std::size_t m_ranks;
    std::size_t m_total;
    std::vector<int> m_position; // [gradient][stage it leaves][micro-batch]; -1 = not sent
    std::vector<int> m_sent; // messages per stream so far: [gradient][from rank][to rank]
    std::vector<int> m_received;
};

/// The deadlock check's replay: runs the rank programs with only data dependencies as the clock
/// (a forward needs the previous stage's forward of its micro-batch, a backward the next stage's
/// backward; an overlapped pair needs both its inputs), each rank as far as it can, round after
/// round, until no rank makes progress. A forward or backward naming a stage or micro-batch out of
/// range never becomes ready.
class Replay
{
public:
    explicit Replay(const Schedule& schedule);

    /// Runs it; `onAction(rank, step, action)` is called for each action as it runs, in each rank's
    /// program order, and may stop the replay by returning false (run() then returns false).
    template<typename OnAction>
    bool run(OnAction&& onAction);
    /// After run(): the first rank left waiting (-1: none) and the step it waits at.
    int stuckRank() const;
    std::size_t stepOf(int rank) const { return m_pc[static_cast<std::size_t>(rank)]; }

private:
    char& done(std::vector<char>& table, int stage, int mb)
    {
        return table[static_cast<std::size_t>(stage) * m_total + static_cast<std::size_t>(mb)];
    }
    bool inputReady(const Action& a)
    {
        if ((a.kind == ActionKind::Forward || a.isBackwardLike())
            && (a.stage < 0 || a.stage > m_last || a.microbatch < 0
                || static_cast<std::size_t>(a.microbatch) >= m_total)) {
            return false; // names no stage or micro-batch: it never runs (the rank rules name it)
        }
        if (a.kind == ActionKind::Forward) {
            return a.stage == 0 || done(m_forwardDone, a.stage - 1, a.microbatch) != 0;
        }
        if (a.isBackwardLike()) {
            return a.stage == m_last || done(m_backwardDone, a.stage + 1, a.microbatch) != 0;
        }
        return true;
    }
    void markDone(const Action& a)
    {
        if (a.kind == ActionKind::Forward) {
            done(m_forwardDone, a.stage, a.microbatch) = 1;
        } else if (a.isBackwardLike()) {
            done(m_backwardDone, a.stage, a.microbatch) = 1;
        }
    }

    const Schedule& m_schedule;
    int m_last;
    std::size_t m_total;
    std::vector<char> m_forwardDone; // [stage · total + mb]
    std::vector<char> m_backwardDone;
    std::vector<std::size_t> m_pc; // per rank: its next step
};

template<typename OnAction>
bool Replay::run(OnAction&& onAction)
{
    for (bool progress = true; progress;) {
        progress = false;
        for (int r = 0; r < m_schedule.ranks(); ++r) {
            const auto& program = m_schedule.programs[static_cast<std::size_t>(r)];
            auto& i = m_pc[static_cast<std::size_t>(r)];
            for (; i < program.size(); ++i) {
                const Action& action = program[i];
                const bool ready = action.isOverlap()
                    ? inputReady(action.forwardHalf()) && inputReady(action.backwardHalf())
                    : inputReady(action);
                if (!ready) {
                    break;
                }
                forEachPart(action, [&](const Action& part) { markDone(part); });
                progress = true;
                if (!onAction(r, static_cast<int>(i), action)) {
                    ++i;
                    return false;
                }
            }
        }
    }
    return true;
}

} // namespace bs::runtime::detail
