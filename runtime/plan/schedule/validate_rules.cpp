#include "runtime/plan/schedule/validate_rules.h"

#include "runtime/plan/schedule/validate.h"

namespace bs::runtime::detail {

namespace {

// This rank's stages, numbered 0.. in stage order; -1 for the others.
std::vector<int> localStages(const Schedule& schedule, int rank, int& held)
{
    std::vector<int> local(static_cast<std::size_t>(schedule.stages()), -1);
    held = 0;
    for (int stage = 0; stage < schedule.stages(); ++stage) {
        if (schedule.rankOf(stage) == rank) {
            local[static_cast<std::size_t>(stage)] = held++;
        }
    }
    return local;
}

template<typename T>
T boundOf(const std::vector<T>& bounds, int rank, T otherwise)
{
    return rank < static_cast<int>(bounds.size()) ? bounds[static_cast<std::size_t>(rank)] : otherwise;
}

} // namespace

Error violation(const Schedule& schedule, int rank, int step, const std::string& why)
{
    const auto& action = schedule.programs[static_cast<std::size_t>(rank)][static_cast<std::size_t>(step)];
    const std::string where = schedule.onePerRank() ? "stage " + std::to_string(rank) : "rank " + std::to_string(rank);
    return makeError(ErrorCode::InvalidArgument,
        where + ", step " + std::to_string(step) + " (" + toString(action) + "): " + why, formatGrid(schedule, step));
}

RankRules::RankRules(const Schedule& schedule, int rank)
    : m_schedule(schedule)
    , m_rank(rank)
    , m_stageCount(schedule.stages())
    , m_total(static_cast<std::size_t>(schedule.totalMicrobatches()))
    , m_bound(boundOf(schedule.inflightBound, rank, schedule.totalMicrobatches() * schedule.stages()))
    , m_memoryStated(rank < static_cast<int>(schedule.activationBound.size()))
    , m_memoryBound(boundOf(schedule.activationBound, rank, 0))
    , m_updatedBatches(static_cast<std::size_t>(schedule.stages()), 0)
    , m_stashes(schedule.weights == WeightPolicy::Stash || schedule.weights == WeightPolicy::TwoVersions)
    , m_versionBound(boundOf(schedule.weightVersionBound, rank, schedule.totalMicrobatches() + 1))
    , m_forwardVersion(m_stashes ? m_total : 0, 0)
{
    int held = 0;
    m_local = localStages(schedule, rank, held);
    m_mbs.resize(static_cast<std::size_t>(held) * m_total);
}

bool RankRules::fail(int step, const std::string& why)
{
    m_failure = violation(m_schedule, m_rank, step, why);
    return false;
}

bool RankRules::checkVersions(int step)
{
    const int versions = static_cast<int>(m_heldVersions.size()) + (m_heldVersions.contains(m_version) ? 0 : 1);
    if (m_stashes && versions > m_versionBound) {
        return fail(
            step, std::to_string(versions) + " weight versions held, bound is " + std::to_string(m_versionBound));
    }
    return true;
}

bool RankRules::takeUpdate(int step, const Action& a)
{
    const int total = static_cast<int>(m_total);
    if (a.firstMb < 0 || a.lastMb >= total || a.firstMb > a.lastMb) {
        return fail(step, "update range outside micro-batches 0.." + std::to_string(total - 1));
    }
    for (int mb = a.firstMb; mb <= a.lastMb; ++mb) {
        auto& st = state(a.stage, mb);
        if (!st.weightGrad) {
            return fail(step, "applies micro-batch " + std::to_string(mb) + " before its weight gradient exists");
        }
        if (st.applied) {
            return fail(step, "applies micro-batch " + std::to_string(mb) + " twice");
        }
        st.applied = true;
    }
    if (m_schedule.weights == WeightPolicy::Flush) {
        ++m_updatedBatches[static_cast<std::size_t>(a.stage)];
    }
    ++m_version;
    return m_stashes ? checkVersions(step) : true;
}

// Inlined into take() (defined below it): as a call per part, saving and restoring registers
// was a quarter of its cost.
__attribute__((always_inline)) inline bool RankRules::takePart(int step, const Action& a)
{
    if (a.stage < 0 || a.stage >= m_stageCount || m_schedule.rankOf(a.stage) != m_rank) {
        return fail(step, "action belongs to stage " + std::to_string(a.stage) + ", which this rank does not hold");
    }
    if (a.kind == ActionKind::Update) {
        return takeUpdate(step, a);
    }
    const int total = static_cast<int>(m_total);
    if (a.microbatch < 0 || a.microbatch >= total) {
        return fail(step, "micro-batch outside 0.." + std::to_string(total - 1));
    }
    auto& st = state(a.stage, a.microbatch);
    switch (a.kind) {
    case ActionKind::Forward:
        if (st.forward) {
            return fail(step, "second forward of this micro-batch");
        }
        if (m_schedule.weights == WeightPolicy::Flush
            && m_schedule.batchOf(a.microbatch) > m_updatedBatches[static_cast<std::size_t>(a.stage)]) {
            return fail(step,
                "forward of batch " + std::to_string(m_schedule.batchOf(a.microbatch))
                    + " before this stage's update of the previous batch (flush)");
        }
        st.forward = true;
        if (++m_inflight > m_bound) {
            return fail(
                step, std::to_string(m_inflight) + " micro-batches in flight, bound is " + std::to_string(m_bound));
        }
        if (++m_live > m_memoryBound && m_memoryStated) {
            return fail(step,
                std::to_string(m_live)
                    + " micro-batches hold activations (forward done, weight "
                      "gradient not yet), the stated memory bound is "
                    + std::to_string(m_memoryBound));
        }
        if (!m_stashes) {
            return true; // one weight version: nothing to count
        }
        m_forwardVersion[static_cast<std::size_t>(a.microbatch)] = m_version;
        ++m_heldVersions[m_version];
        return checkVersions(step);
    case ActionKind::Backward:
    case ActionKind::BackwardInput:
        if (!st.forward) {
            return fail(step, "backward before its forward");
        }
        if (st.inputGrad) {
            return fail(step, "second backward of this micro-batch");
        }
        st.inputGrad = true;
        st.weightGrad = a.kind == ActionKind::Backward;
        --m_inflight;
        m_live -= st.weightGrad ? 1 : 0;
        if (!m_stashes) {
            return true;
        }
        if (const int fv = m_forwardVersion[static_cast<std::size_t>(a.microbatch)];
            int* count = m_heldVersions.find(fv)) {
            if (--*count == 0) {
                m_heldVersions.erase(fv);
            }
        }
        return true;
    case ActionKind::BackwardWeight:
        if (!st.inputGrad || st.weightGrad) {
            return fail(step, "weight gradient needs exactly one earlier input gradient (I)");
        }
        st.weightGrad = true;
        --m_live;
        return true;
    case ActionKind::Update:
    case ActionKind::OverlapForwardBackward:
        break; // handled above / split by take()
    }
    return true;
}

bool RankRules::take(int step, const Action& action)
{
    // forEachPart's order: an overlapped pair's forward half, then its backward half.
    return action.isOverlap() ? takePart(step, action.forwardHalf()) && takePart(step, action.backwardHalf())
                              : takePart(step, action);
}

bool RankRules::finish()
{
    for (int stage = 0; stage < m_stageCount; ++stage) {
        if (m_schedule.rankOf(stage) != m_rank) {
            continue;
        }
        for (std::size_t mb = 0; mb < m_total; ++mb) {
            const auto& st = state(stage, static_cast<int>(mb));
            if (!st.forward || !st.inputGrad || !st.weightGrad || !st.applied) {
                const char* missing = !st.forward ? "forward"
                    : !st.inputGrad               ? "backward"
                    : !st.weightGrad              ? "weight gradient"
                                                  : "update";
                m_failure = makeError(ErrorCode::InvalidArgument,
                    "stage " + std::to_string(stage) + ": micro-batch " + std::to_string(mb) + " has no " + missing,
                    formatGrid(m_schedule));
                return false;
            }
        }
    }
    return true;
}

Status lagBoundShape(const Schedule& schedule)
{
    if (!schedule.lagBound.empty() && static_cast<int>(schedule.lagBound.size()) != schedule.stages()) {
        return makeError(ErrorCode::InvalidArgument,
            "the lag bound names " + std::to_string(schedule.lagBound.size()) + " stages",
            "allowed: one per model stage (" + std::to_string(schedule.stages()) + ")");
    }
    return ok();
}

LagRule::LagRule(const Schedule& schedule, int rank)
    : m_schedule(schedule)
    , m_rank(rank)
    , m_total(static_cast<std::size_t>(schedule.totalMicrobatches()))
{
    int held = 0;
    m_local = localStages(schedule, rank, held);
    m_updates.assign(static_cast<std::size_t>(held), 0);
    m_forwardedAt.assign(static_cast<std::size_t>(held) * m_total, 0);
}

bool LagRule::take(int step, const Action& action)
{
    return action.isOverlap() ? takePart(step, action.forwardHalf()) && takePart(step, action.backwardHalf())
                              : takePart(step, action);
}

bool LagRule::takePart(int step, const Action& a)
{
    const int stages = m_schedule.stages();
    const int at = a.stage >= 0 && a.stage < stages ? m_local[static_cast<std::size_t>(a.stage)] : -1;
    if (at < 0 || a.microbatch < 0 || a.microbatch >= static_cast<int>(m_total)) {
        return true; // RankRules refuses these
    }
    const auto slot = static_cast<std::size_t>(at) * m_total + static_cast<std::size_t>(a.microbatch);
    if (a.kind == ActionKind::Update) {
        ++m_updates[static_cast<std::size_t>(at)];
    } else if (a.kind == ActionKind::Forward) {
        m_forwardedAt[slot] = m_updates[static_cast<std::size_t>(at)];
    } else if (a.isBackwardLike()) {
        const int lag = m_updates[static_cast<std::size_t>(at)] - m_forwardedAt[slot];
        const int bound = m_schedule.lagBound[static_cast<std::size_t>(a.stage)];
        if (lag > bound) {
            m_failure = violation(m_schedule, m_rank, step,
                "micro-batch " + std::to_string(a.microbatch) + " crosses " + std::to_string(lag) + " updates of stage "
                    + std::to_string(a.stage) + " between its forward and its backward; the stated lag bound is "
                    + std::to_string(bound));
            return false;
        }
    }
    return true;
}

StreamOrder::StreamOrder(const Schedule& schedule)
    : m_schedule(schedule)
    , m_stages(schedule.stages())
    , m_ranks(static_cast<std::size_t>(schedule.ranks()))
    , m_total(static_cast<std::size_t>(schedule.totalMicrobatches()))
    , m_position(2 * static_cast<std::size_t>(m_stages) * m_total, -1)
    , m_sent(2 * m_ranks * m_ranks, 0)
    , m_received(2 * m_ranks * m_ranks, 0)
{}

Replay::Replay(const Schedule& schedule)
    : m_schedule(schedule)
    , m_last(schedule.stages() - 1)
    , m_total(static_cast<std::size_t>(schedule.totalMicrobatches()))
    , m_forwardDone(static_cast<std::size_t>(schedule.stages()) * m_total, 0)
    , m_backwardDone(static_cast<std::size_t>(schedule.stages()) * m_total, 0)
    , m_pc(static_cast<std::size_t>(schedule.ranks()), 0)
{}

int Replay::stuckRank() const
{
    for (int r = 0; r < m_schedule.ranks(); ++r) {
        if (m_pc[static_cast<std::size_t>(r)] < m_schedule.programs[static_cast<std::size_t>(r)].size()) {
            return r;
        }
    }
    return -1;
}

} // namespace bs::runtime::detail
