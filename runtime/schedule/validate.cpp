#include "runtime/schedule/validate.h"

#include "base/flat_count_map.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace bs::runtime {

namespace {

struct MicrobatchState
{
    bool forward = false;
    bool inputGrad = false; // B or I done
    bool weightGrad = false;// B or W done
    bool applied = false;   // covered by an update
};

Error violation(const Schedule& schedule, int rank, int step, const std::string& why)
{
    const auto& action = schedule.programs[static_cast<std::size_t>(rank)][static_cast<std::size_t>(step)];
    const std::string where = schedule.onePerRank() ? "stage " + std::to_string(rank) : "rank " + std::to_string(rank);
    return makeError(ErrorCode::InvalidArgument,
                     where + ", step " + std::to_string(step) + " (" + toString(action) + "): " + why,
                     formatGrid(schedule, step));
}

// Per-rank rules: order of F, B/I, W and U for every micro-batch of each of the rank's stages,
// the rank's in-flight bound (all its stages together), and for flush schedules that a batch's
// forwards on a stage wait for that stage's update of the previous batch.
Status checkRank(const Schedule& schedule, int r)
{
    const int total = schedule.totalMicrobatches();
    const int stageCount = schedule.stages();
    const auto& program = schedule.programs[static_cast<std::size_t>(r)];
    // State for this rank's stages only (local index), so p ranks cost p·v·total, not p·p·v·total.
    std::vector<int> local(static_cast<std::size_t>(stageCount), -1);
    int held = 0;
    for (int stage = 0; stage < stageCount; ++stage) {
        if (schedule.rankOf(stage) == r) {
            local[static_cast<std::size_t>(stage)] = held++;
        }
    }
    std::vector<MicrobatchState> mbs(static_cast<std::size_t>(held) * static_cast<std::size_t>(total));
    const auto state = [&](int stage, int mb) -> MicrobatchState& {
        return mbs[static_cast<std::size_t>(local[static_cast<std::size_t>(stage)]) * static_cast<std::size_t>(total)
                   + static_cast<std::size_t>(mb)];
    };
    const int bound = r < static_cast<int>(schedule.inflightBound.size())
                          ? schedule.inflightBound[static_cast<std::size_t>(r)]
                          : total * stageCount;
    int inflight = 0;
    // Activation memory as the schedule's authors count it: F until the W (or B) that frees it.
    const bool memoryStated = r < static_cast<int>(schedule.activationBound.size());
    const int memoryBound = memoryStated ? schedule.activationBound[static_cast<std::size_t>(r)] : 0;
    int live = 0;
    std::vector<int> updatedBatches(static_cast<std::size_t>(stageCount), 0); // flush: per stage
    // Stash policies: the weight versions this rank must hold are the current one and every
    // version an in-flight micro-batch was forwarded with (its backward runs on that version).
    const bool stashes = schedule.weights == WeightPolicy::Stash || schedule.weights == WeightPolicy::TwoVersions;
    const int versionBound = r < static_cast<int>(schedule.weightVersionBound.size())
                                 ? schedule.weightVersionBound[static_cast<std::size_t>(r)]
                                 : total + 1;
    int version = 0;                 // updates this rank has applied so far
    std::vector<int> forwardVersion(stashes ? static_cast<std::size_t>(total) : 0, 0);
    FlatCountMap heldVersions; // forward version -> in-flight micro-batches forwarded on it
    // The checks below return false on the first violation, which `failure` then holds: a Status
    // per action is a variant with two strings to build, test and destroy.
    Status failure = ok();
    const auto fail = [&](int step, const std::string& why) {
        failure = violation(schedule, r, step, why);
        return false;
    };
    const auto checkVersions = [&](int step) -> bool {
        const int versions = static_cast<int>(heldVersions.size()) + (heldVersions.contains(version) ? 0 : 1);
        if (stashes && versions > versionBound) {
            return fail(step, std::to_string(versions) + " weight versions held, bound is "
                                  + std::to_string(versionBound));
        }
        return true;
    };
    // Inlined into the loop: as a call, saving and restoring registers was a quarter of its cost.
    const auto checkPart = [&](int step, const Action& a) __attribute__((always_inline)) -> bool {
        if (a.stage < 0 || a.stage >= stageCount || schedule.rankOf(a.stage) != r) {
            return fail(step, "action belongs to stage " + std::to_string(a.stage)
                                                    + ", which this rank does not hold");
        }
        if (a.kind == ActionKind::Update) {
            if (a.firstMb < 0 || a.lastMb >= total || a.firstMb > a.lastMb) {
                return fail(step, "update range outside micro-batches 0.." + std::to_string(total - 1));
            }
            for (int mb = a.firstMb; mb <= a.lastMb; ++mb) {
                auto& st = state(a.stage, mb);
                if (!st.weightGrad) {
                    return fail(step, "applies micro-batch " + std::to_string(mb)
                                                            + " before its weight gradient exists");
                }
                if (st.applied) {
                    return fail(step, "applies micro-batch " + std::to_string(mb) + " twice");
                }
                st.applied = true;
            }
            if (schedule.weights == WeightPolicy::Flush) {
                ++updatedBatches[static_cast<std::size_t>(a.stage)];
            }
            ++version;
            return stashes ? checkVersions(step) : true;
        }
        if (a.microbatch < 0 || a.microbatch >= total) {
            return fail(step, "micro-batch outside 0.." + std::to_string(total - 1));
        }
        auto& st = state(a.stage, a.microbatch);
        switch (a.kind) {
        case ActionKind::Forward:
            if (st.forward) {
                return fail(step, "second forward of this micro-batch");
            }
            if (schedule.weights == WeightPolicy::Flush
                && schedule.batchOf(a.microbatch) > updatedBatches[static_cast<std::size_t>(a.stage)]) {
                return fail(step, "forward of batch " + std::to_string(schedule.batchOf(a.microbatch))
                                                        + " before this stage's update of the previous batch (flush)");
            }
            st.forward = true;
            if (++inflight > bound) {
                return fail(step, std::to_string(inflight) + " micro-batches in flight, bound is "
                                                        + std::to_string(bound));
            }
            if (++live > memoryBound && memoryStated) {
                return fail(step, std::to_string(live)
                                                        + " micro-batches hold activations (forward done, weight "
                                                          "gradient not yet), the stated memory bound is "
                                                        + std::to_string(memoryBound));
            }
            if (!stashes) {
                return true; // one weight version: nothing to count
            }
            forwardVersion[static_cast<std::size_t>(a.microbatch)] = version;
            ++heldVersions[version];
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
            --inflight;
            live -= st.weightGrad ? 1 : 0;
            if (!stashes) {
                return true;
            }
            if (const int fv = forwardVersion[static_cast<std::size_t>(a.microbatch)];
                int* count = heldVersions.find(fv)) {
                if (--*count == 0) {
                    heldVersions.erase(fv);
                }
            }
            return true;
        case ActionKind::BackwardWeight:
            if (!st.inputGrad || st.weightGrad) {
                return fail(step, "weight gradient needs exactly one earlier input gradient (I)");
            }
            st.weightGrad = true;
            --live;
            return true;
        case ActionKind::Update:
        case ActionKind::OverlapForwardBackward: break; // handled above / split by forEachPart
        }
        return true;
    };
    for (int step = 0; step < static_cast<int>(program.size()); ++step) {
        const Action& action = program[static_cast<std::size_t>(step)];
        // forEachPart's order: an overlapped pair's forward half, then its backward half.
        const bool passed = action.isOverlap() ? checkPart(step, action.forwardHalf()) && checkPart(step, action.backwardHalf())
                                               : checkPart(step, action);
        if (!passed) {
            return failure;
        }
    }
    for (int stage = 0; stage < stageCount; ++stage) {
        if (schedule.rankOf(stage) != r) {
            continue;
        }
        for (int mb = 0; mb < total; ++mb) {
            const auto& st = state(stage, mb);
            if (!st.forward || !st.inputGrad || !st.weightGrad || !st.applied) {
                const char* missing = !st.forward      ? "forward"
                                      : !st.inputGrad  ? "backward"
                                      : !st.weightGrad ? "weight gradient"
                                                       : "update";
                return makeError(ErrorCode::InvalidArgument,
                                 "stage " + std::to_string(stage) + ": micro-batch " + std::to_string(mb) + " has no "
                                     + missing,
                                 formatGrid(schedule));
            }
        }
    }
    return ok();
}

// The stated version-lag bound (Schedule::lagBound): per stage, the updates of that stage between
// each micro-batch's forward and the start of its backward (B or I), counted in the rank's program
// order, which is the order every executor runs a rank's actions in. An overlapped pair's forward
// comes before its backward half.
Status checkLag(const Schedule& schedule, int r)
{
    if (schedule.lagBound.empty()) {
        return ok();
    }
    if (static_cast<int>(schedule.lagBound.size()) != schedule.stages()) {
        return makeError(ErrorCode::InvalidArgument,
            "the lag bound names " + std::to_string(schedule.lagBound.size()) + " stages",
            "allowed: one per model stage (" + std::to_string(schedule.stages()) + ")");
    }
    const int total = schedule.totalMicrobatches();
    // This rank's stages only (local index), as checkRank does: p·v·total entries over all ranks.
    std::vector<int> local(static_cast<std::size_t>(schedule.stages()), -1);
    int held = 0;
    for (int stage = 0; stage < schedule.stages(); ++stage) {
        if (schedule.rankOf(stage) == r) {
            local[static_cast<std::size_t>(stage)] = held++;
        }
    }
    std::vector<int> updates(static_cast<std::size_t>(held), 0); // per local stage, so far
    std::vector<int> forwardedAt(static_cast<std::size_t>(held) * static_cast<std::size_t>(total), 0);
    const auto& program = schedule.programs[static_cast<std::size_t>(r)];
    Status status = ok(); // one for the whole walk: a Status per step cost more than the check
    for (int step = 0; step < static_cast<int>(program.size()); ++step) {
        forEachPart(program[static_cast<std::size_t>(step)], [&](const Action& a) {
            const int at = a.stage >= 0 && a.stage < schedule.stages() ? local[static_cast<std::size_t>(a.stage)] : -1;
            if (!status || at < 0 || a.microbatch < 0 || a.microbatch >= total) {
                return; // checkRank has refused these already
            }
            const auto slot =
                static_cast<std::size_t>(at) * static_cast<std::size_t>(total) + static_cast<std::size_t>(a.microbatch);
            if (a.kind == ActionKind::Update) {
                ++updates[static_cast<std::size_t>(at)];
            } else if (a.kind == ActionKind::Forward) {
                forwardedAt[slot] = updates[static_cast<std::size_t>(at)];
            } else if (a.isBackwardLike()) {
                const int lag = updates[static_cast<std::size_t>(at)] - forwardedAt[slot];
                const int bound = schedule.lagBound[static_cast<std::size_t>(a.stage)];
                if (lag > bound) {
                    status = violation(schedule, r, step,
                        "micro-batch " + std::to_string(a.microbatch) + " crosses " + std::to_string(lag)
                            + " updates of stage " + std::to_string(a.stage)
                            + " between its forward and its backward; the stated lag bound is "
                            + std::to_string(bound));
                }
            }
        });
        if (!status) {
            return status;
        }
    }
    return ok();
}

// Cross-stage dependencies: replays the rank programs with only data dependencies as the clock.
// If no rank's next action can run, the schedule deadlocks at that step. An overlapped pair
// needs both its inputs before it starts.
Status checkDeadlock(const Schedule& schedule)
{
    const int ranks = schedule.ranks();
    const int last = schedule.stages() - 1;
    const auto total = static_cast<std::size_t>(schedule.totalMicrobatches());
    const auto S = static_cast<std::size_t>(schedule.stages());
    std::vector<char> fwd(S * total, 0);
    std::vector<char> bwd(S * total, 0);
    const auto at = [&](std::vector<char>& done, int stage, int mb) -> char& {
        return done[static_cast<std::size_t>(stage) * total + static_cast<std::size_t>(mb)];
    };
    const auto inputReady = [&](const Action& a) {
        if (a.kind == ActionKind::Forward) {
            return a.stage == 0 || at(fwd, a.stage - 1, a.microbatch) != 0;
        }
        if (a.isBackwardLike()) {
            return a.stage == last || at(bwd, a.stage + 1, a.microbatch) != 0;
        }
        return true;
    };
    std::vector<std::size_t> pc(static_cast<std::size_t>(ranks), 0);
    for (bool progress = true; progress;) {
        progress = false;
        for (int r = 0; r < ranks; ++r) {
            const auto& program = schedule.programs[static_cast<std::size_t>(r)];
            auto& i = pc[static_cast<std::size_t>(r)];
            for (; i < program.size(); ++i) {
                bool ready = true;
                forEachPart(program[i], [&](const Action& part) { ready = ready && inputReady(part); });
                if (!ready) {
                    break;
                }
                forEachPart(program[i], [&](const Action& part) {
                    if (part.kind == ActionKind::Forward) {
                        at(fwd, part.stage, part.microbatch) = 1;
                    } else if (part.isBackwardLike()) {
                        at(bwd, part.stage, part.microbatch) = 1;
                    }
                });
                progress = true;
            }
        }
    }
    for (int r = 0; r < ranks; ++r) {
        const auto step = pc[static_cast<std::size_t>(r)];
        if (step < schedule.programs[static_cast<std::size_t>(r)].size()) {
            return makeError(ErrorCode::Deadlock,
                             "deadlock: " + std::string(schedule.onePerRank() ? "stage " : "rank ") + std::to_string(r)
                                 + " waits forever at step " + std::to_string(step) + " ("
                                 + toString(schedule.programs[static_cast<std::size_t>(r)][step])
                                 + ") for an input no stage will produce",
                             formatGrid(schedule, static_cast<int>(step)));
        }
    }
    return ok();
}

// One transfer between two ranks: what it carries (activation or gradient), its stage and micro-batch.
struct Message
{
    bool gradient = false;
    int fromStage = 0;
    int microbatch = 0;
    friend bool operator==(const Message&, const Message&) = default;
};

// The messages rank `from` sends to rank `to` in send order (sending = true), or the ones `to`
// consumes from `from` in receive order (sending = false), one at a time without storing them.
class ChannelCursor
{
public:
    ChannelCursor(const Schedule& schedule, int from, int to, bool gradients, bool sending)
        : m_schedule(schedule)
        , m_program(schedule.programs[static_cast<std::size_t>(sending ? from : to)])
        , m_from(from)
        , m_to(to)
        , m_gradients(gradients)
        , m_sending(sending)
    {
    }

    /// The next message, or nullopt at the end of the program.
    std::optional<Message> next()
    {
        while (m_pending.empty() && m_pc < m_program.size()) {
            forEachPart(m_program[m_pc++], [&](const Action& a) { collect(a); });
        }
        if (m_pending.empty()) {
            return std::nullopt;
        }
        const Message m = m_pending.front();
        m_pending.erase(m_pending.begin());
        return m;
    }

private:
    void collect(const Action& a)
    {
        const bool f = a.kind == ActionKind::Forward;
        if ((!f && !a.isBackwardLike()) || f == m_gradients) {
            return;
        }
        const int last = m_schedule.stages() - 1;
        const int other = m_sending ? (f ? a.stage + 1 : a.stage - 1) : (f ? a.stage - 1 : a.stage + 1);
        if (other < 0 || other > last || m_schedule.rankOf(other) != (m_sending ? m_to : m_from)) {
            return;
        }
        m_pending.push_back({!f, m_sending ? a.stage : other, a.microbatch});
    }

    const Schedule& m_schedule;
    const std::vector<Action>& m_program;
    int m_from, m_to;
    bool m_gradients;
    bool m_sending;
    std::size_t m_pc = 0;
    std::vector<Message> m_pending; // at most the two halves of one overlapped pair
};

// The check below in one pass over each program, for a schedule checkRank has accepted (every
// transfer then leaves its sender once): the i-th message a receiver takes from a stream must be
// the one its sender sent i-th. True when every stream is in order; false when one may not be,
// and the streaming check (which names the first message out of order) decides.
bool channelsInOrder(const Schedule& schedule)
{
    const int ranks = schedule.ranks();
    const int stages = schedule.stages();
    const auto total = static_cast<std::size_t>(schedule.totalMicrobatches());
    const auto R = static_cast<std::size_t>(ranks);
    // Where each message stands in its stream: [gradient][stage it leaves][micro-batch]; -1 = not sent.
    std::vector<int> position(2 * static_cast<std::size_t>(stages) * total, -1);
    const auto positionOf = [&](bool gradient, int fromStage, int mb) -> int& {
        return position[(static_cast<std::size_t>(gradient) * static_cast<std::size_t>(stages)
                            + static_cast<std::size_t>(fromStage))
                * total
            + static_cast<std::size_t>(mb)];
    };
    // Messages per stream so far: [gradient][from rank][to rank].
    std::vector<int> sent(2 * R * R, 0);
    std::vector<int> received(2 * R * R, 0);
    const auto stream = [&](std::vector<int>& counts, bool gradient, int from, int to) -> int& {
        return counts[(static_cast<std::size_t>(gradient) * R + static_cast<std::size_t>(from)) * R
            + static_cast<std::size_t>(to)];
    };
    bool inOrder = true;
    for (int r = 0; r < ranks && inOrder; ++r) {
        for (const Action& step : schedule.programs[static_cast<std::size_t>(r)]) {
            forEachPart(step, [&](const Action& a) {
                const bool f = a.kind == ActionKind::Forward;
                const int to = f ? a.stage + 1 : a.stage - 1;
                if ((!f && !a.isBackwardLike()) || to < 0 || to >= stages || schedule.rankOf(to) == r) {
                    return;
                }
                int& at = positionOf(!f, a.stage, a.microbatch);
                inOrder = inOrder && at == -1; // sent twice: let the streaming check judge
                at = stream(sent, !f, r, schedule.rankOf(to))++;
            });
        }
    }
    for (int r = 0; r < ranks && inOrder; ++r) {
        for (const Action& step : schedule.programs[static_cast<std::size_t>(r)]) {
            forEachPart(step, [&](const Action& a) {
                const bool f = a.kind == ActionKind::Forward;
                const int from = f ? a.stage - 1 : a.stage + 1;
                if ((!f && !a.isBackwardLike()) || from < 0 || from >= stages || schedule.rankOf(from) == r) {
                    return;
                }
                const int fromRank = schedule.rankOf(from);
                const int i = stream(received, !f, fromRank, r)++;
                // Beyond the messages sent, a missing one is the dependency check's to report.
                if (i < stream(sent, !f, fromRank, r) && positionOf(!f, from, a.microbatch) != i) {
                    inOrder = false;
                }
            });
        }
    }
    return inOrder;
}

// Activations and gradients between two ranks each go over one ordered stream (a point-to-point
// channel per direction and kind, as Megatron's send_forward / send_backward and PyTorch's
// RECV_F / RECV_B keep them apart): the receiver must take a stream's messages in the order the
// sender produces them, or it takes the wrong tensor (same shape, silently) or waits forever.
// Checks, for every ordered pair of neighbouring ranks and both kinds, that the order in which the
// receiver's actions consume messages equals the order in which the sender's actions produce
// them. Streams both programs once per stream, so validate() runs it only when the one-pass
// channelsInOrder() above finds a stream that may be out of order: this one names the message.
Status checkChannelOrder(const Schedule& schedule)
{
    std::set<std::pair<int, int>> channels;
    for (int stage = 0; stage + 1 < schedule.stages(); ++stage) {
        const int a = schedule.rankOf(stage);
        const int b = schedule.rankOf(stage + 1);
        if (a != b) {
            channels.insert({a, b});
            channels.insert({b, a});
        }
    }
    const auto name = [](const Message& m) {
        return std::string(m.gradient ? "gradient" : "activation") + " of stage " + std::to_string(m.fromStage)
               + ", micro-batch " + std::to_string(m.microbatch);
    };
    for (const auto& [from, to] : channels) {
      for (bool gradients : {false, true}) {
        ChannelCursor out(schedule, from, to, gradients, true);
        ChannelCursor in(schedule, from, to, gradients, false);
        for (std::size_t i = 0;; ++i) {
            const auto sent = out.next();
            const auto received = in.next();
            if (!sent || !received) {
                break; // a missing message is the dependency check's to report
            }
            if (!(*sent == *received)) {
                return makeError(ErrorCode::Deadlock,
                                 "rank " + std::to_string(to) + " receives message " + std::to_string(i) + " from rank "
                                     + std::to_string(from) + " out of order: it expects the " + name(*received)
                                     + " but rank " + std::to_string(from) + " sends the " + name(*sent) + " then",
                                 "a point-to-point channel delivers in send order");
            }
        }
      }
    }
    return ok();
}

// Every stage the placement names lives on one of the schedule's ranks.
Status checkStagePlacement(const Schedule& schedule)
{
    if (schedule.rankOfStage.empty()) {
        return ok(); // one stage per rank: stage r on rank r
    }
    for (int stage = 0; stage < schedule.stages(); ++stage) {
        if (schedule.rankOf(stage) < 0 || schedule.rankOf(stage) >= schedule.ranks()) {
            return makeError(ErrorCode::InvalidArgument,
                "stage " + std::to_string(stage) + " is placed on rank " + std::to_string(schedule.rankOf(stage)),
                "allowed ranks: 0.." + std::to_string(schedule.ranks() - 1));
        }
    }
    return ok();
}

} // namespace

Status checkIndices(const Schedule& schedule)
{
    const int stages = schedule.stages();
    const int total = schedule.totalMicrobatches();
    if (Status placed = checkStagePlacement(schedule); !placed) {
        return placed;
    }
    for (int r = 0; r < schedule.ranks(); ++r) {
        const auto& program = schedule.programs[static_cast<std::size_t>(r)];
        for (std::size_t step = 0; step < program.size(); ++step) {
            const Action& a = program[step];
            const auto onRank = [&](int stage) { return stage >= 0 && stage < stages && schedule.rankOf(stage) == r; };
            const auto inRange = [&](int mb) { return mb >= 0 && mb < total; };
            const bool fits = a.kind == ActionKind::Update
                ? onRank(a.stage)
                : (onRank(a.stage) && inRange(a.microbatch)
                    && (!a.isOverlap() || (onRank(a.pairStage) && inRange(a.pairMicrobatch))));
            if (!fits) {
                return makeError(ErrorCode::InvalidArgument,
                    "rank " + std::to_string(r) + ", step " + std::to_string(step) + " (" + toString(a)
                        + ") names a stage this rank does not hold or a micro-batch outside 0.."
                        + std::to_string(total - 1));
            }
        }
    }
    return ok();
}

Status validate(const Schedule& schedule)
{
    if (schedule.programs.empty()) {
        return makeError(ErrorCode::InvalidArgument, "schedule has no stages");
    }
    if (Status placed = checkStagePlacement(schedule); !placed) {
        return placed;
    }
    for (int r = 0; r < schedule.ranks(); ++r) {
        if (auto status = checkRank(schedule, r); !status) {
            return status;
        }
        if (auto status = checkLag(schedule, r); !status) {
            return status;
        }
    }
    if (auto status = checkDeadlock(schedule); !status) {
        return status;
    }
    return channelsInOrder(schedule) ? ok() : checkChannelOrder(schedule);
}

std::string formatGrid(const Schedule& schedule, int errorStep, int maxRows)
{
    std::size_t rows = 0;
    for (const auto& program : schedule.programs) {
        rows = std::max(rows, program.size());
    }
    // Show a window around the error step, or the start of the schedule.
    const int first = errorStep >= 0 ? std::max(0, errorStep - maxRows / 2) : 0;
    const int last = std::min(static_cast<int>(rows), first + maxRows);
    std::ostringstream out;
    out << "step ";
    for (int r = 0; r < schedule.ranks(); ++r) {
        out << (schedule.onePerRank() ? " | stage " : " | rank ") << r << (schedule.onePerRank() ? "  " : "   ");
    }
    out << '\n';
    for (int step = first; step < last; ++step) {
        out << (step < 10 ? "   " : step < 100 ? "  " : step < 1000 ? " " : "") << step << " ";
        for (const auto& program : schedule.programs) {
            std::string cell = static_cast<std::size_t>(step) < program.size()
                                   ? toString(program[static_cast<std::size_t>(step)])
                                   : "";
            cell.resize(std::max<std::size_t>(cell.size(), 9), ' '); // wider cells (pairs) just push on
            out << " | " << cell;
        }
        if (step == errorStep) {
            out << "  <-- ERROR HERE";
        }
        out << '\n';
    }
    if (static_cast<std::size_t>(last) < rows) {
        out << "  ... (" << rows - static_cast<std::size_t>(last) << " more steps)\n";
    }
    return out.str();
}

} // namespace bs::runtime
