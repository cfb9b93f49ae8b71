// validate() of a flush schedule, batch by batch. A synchronous schedule's program on each rank is
// its global batches one after another, and no action of batch n reads anything of another batch
// (a forward needs the previous stage's forward of the same micro-batch, a backward the next
// stage's backward of it, an update the gradients of its own batch). So:
//   - the deadlock replay of the whole schedule finishes iff each batch's finishes on its own: a
//     rank starts batch n only once its batch n − 1 has finished, and what batch n waits for is
//     batch n's actions on other ranks, which finish by the same argument;
//   - every message of batch n is sent and received inside batch n on both ranks, so each
//     channel's messages are the batches' messages in batch order, in order iff each batch's are;
//   - the rank rules count per micro-batch, and every count (in flight, holding activations,
//     weight versions, updates between a forward and its backward) is back where it started at
//     the end of a batch that passes them; the flush rule asks batch n's forwards for this
//     stage's update of batch n − 1, which the batch before holds.
// A batch that is the one before it moved by one batch (m micro-batches, one update) passes or
// fails as that one does. So the schedule passes iff every batch that is not such a copy passes
// as a schedule of one batch, moved to batch 0: a schedule generated as a block of actions
// repeated N times is validated in one block and a compare of the rest, not N blocks.

#include "runtime/plan/schedule/batch_repeat.h"
#include "runtime/plan/schedule/validate.h"
#include "runtime/plan/schedule/validate_rules.h"

namespace bs::runtime::detail {

namespace {

// Of the batches that are not the one before moved on, at most this many are validated one by
// one; more and the whole schedule is walked at once as before.
constexpr std::size_t kMostDistinctBatches = 4;

// Whether every micro-batch `a` names (an update: every one it applies) is one of batch n's.
bool inBatch(const Action& a, int n, int m)
{
    const auto in = [&](int mb) { return mb >= n * m && mb < (n + 1) * m; };
    if (a.kind == ActionKind::Update) {
        return a.firstMb <= a.lastMb && in(a.firstMb) && in(a.lastMb);
    }
    return in(a.microbatch) && (!a.isOverlap() || in(a.pairMicrobatch));
}

// Batch n of `schedule` (each rank's n-th block of `length[r]` actions) as a schedule of one
// batch, moved to batch 0: every field but the programs and the batch count is `schedule`'s.
Schedule oneBatch(const Schedule& schedule, const std::vector<std::size_t>& length, int n)
{
    Schedule one;
    one.params = schedule.params;
    one.params.batches = 1;
    one.weights = schedule.weights;
    one.splitBackward = schedule.splitBackward;
    one.asynchronous = schedule.asynchronous;
    one.inflightBound = schedule.inflightBound;
    one.activationBound = schedule.activationBound;
    one.weightVersionBound = schedule.weightVersionBound;
    one.lagBound = schedule.lagBound;
    one.placement = schedule.placement;
    one.rankOfStage = schedule.rankOfStage;
    const int m = schedule.params.microbatches;
    one.programs.resize(schedule.programs.size());
    for (std::size_t r = 0; r < schedule.programs.size(); ++r) {
        const auto first =
            schedule.programs[r].begin() + static_cast<std::ptrdiff_t>(length[r] * static_cast<std::size_t>(n));
        for (auto it = first; it != first + static_cast<std::ptrdiff_t>(length[r]); ++it) {
            one.programs[r].push_back(movedOn(*it, -n, m));
        }
    }
    return one;
}

} // namespace

std::optional<bool> passesBatchByBatch(const Schedule& schedule)
{
    const int batches = schedule.params.batches;
    const int m = schedule.params.microbatches;
    if (schedule.weights != WeightPolicy::Flush || schedule.asynchronous || batches < 2 || m < 1) {
        return std::nullopt;
    }
    std::vector<std::size_t> length;
    for (const auto& program : schedule.programs) {
        if (program.size() % static_cast<std::size_t>(batches) != 0) {
            return std::nullopt;
        }
        length.push_back(program.size() / static_cast<std::size_t>(batches));
    }
    // The batches that are not the one before moved on (batch 0 among them), and that each of them
    // names only its own micro-batches (a copy of such a batch does, moved).
    std::vector<int> distinct{0};
    for (int n = 1; n < batches; ++n) {
        bool copy = true;
        for (std::size_t r = 0; r < schedule.programs.size() && copy; ++r) {
            const Action* now = schedule.programs[r].data() + length[r] * static_cast<std::size_t>(n);
            const Action* before = now - length[r];
            for (std::size_t i = 0; i < length[r]; ++i) {
                if (!(now[i] == movedOn(before[i], 1, m))) {
                    copy = false;
                    break;
                }
            }
        }
        if (!copy) {
            if (distinct.size() == kMostDistinctBatches) {
                return std::nullopt;
            }
            distinct.push_back(n);
        }
    }
    for (int n : distinct) {
        for (std::size_t r = 0; r < schedule.programs.size(); ++r) {
            const Action* block = schedule.programs[r].data() + length[r] * static_cast<std::size_t>(n);
            for (std::size_t i = 0; i < length[r]; ++i) {
                if (!inBatch(block[i], n, m)) {
                    return std::nullopt; // reads across batches: the argument above does not hold
                }
            }
        }
    }
    for (int n : distinct) {
        if (!validate(oneBatch(schedule, length, n))) {
            return false;
        }
    }
    return true;
}

} // namespace bs::runtime::detail
