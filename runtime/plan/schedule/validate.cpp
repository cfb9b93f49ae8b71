#include "runtime/plan/schedule/validate.h"

#include "runtime/plan/schedule/validate_rules.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

namespace bs::runtime {

namespace {

using detail::LagRule;
using detail::RankRules;
using detail::Replay;
using detail::StreamOrder;

Status checkRank(const Schedule& schedule, int r)
{
    RankRules rules(schedule, r);
    const auto& program = schedule.programs[static_cast<std::size_t>(r)];
    for (int step = 0; step < static_cast<int>(program.size()); ++step) {
        if (!rules.take(step, program[static_cast<std::size_t>(step)])) {
            return rules.failure();
        }
    }
    return rules.finish() ? ok() : rules.failure();
}

Status checkLag(const Schedule& schedule, int r)
{
    if (schedule.lagBound.empty()) {
        return ok();
    }
    if (Status shape = detail::lagBoundShape(schedule); !shape) {
        return shape;
    }
    LagRule rule(schedule, r);
    const auto& program = schedule.programs[static_cast<std::size_t>(r)];
    for (int step = 0; step < static_cast<int>(program.size()); ++step) {
        if (!rule.take(step, program[static_cast<std::size_t>(step)])) {
            return rule.failure();
        }
    }
    return ok();
}

// Cross-stage dependencies: if the replay leaves a rank waiting, the schedule deadlocks there.
Status checkDeadlock(const Schedule& schedule)
{
    Replay replay(schedule);
    replay.run([](int, int, const Action&) { return true; });
    const int r = replay.stuckRank();
    if (r < 0) {
        return ok();
    }
    const auto step = replay.stepOf(r);
    return makeError(ErrorCode::Deadlock,
        "deadlock: " + std::string(schedule.onePerRank() ? "stage " : "rank ") + std::to_string(r)
            + " waits forever at step " + std::to_string(step) + " ("
            + toString(schedule.programs[static_cast<std::size_t>(r)][step]) + ") for an input no stage will produce",
        formatGrid(schedule, static_cast<int>(step)));
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
    {}

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
    StreamOrder order(schedule);
    bool inOrder = true;
    for (int r = 0; r < schedule.ranks() && inOrder; ++r) {
        for (const Action& step : schedule.programs[static_cast<std::size_t>(r)]) {
            forEachPart(step, [&](const Action& a) { inOrder = order.sent(r, a) && inOrder; });
        }
    }
    for (int r = 0; r < schedule.ranks() && inOrder; ++r) {
        for (const Action& step : schedule.programs[static_cast<std::size_t>(r)]) {
            forEachPart(step, [&](const Action& a) { inOrder = order.received(r, a) && inOrder; });
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
                            + std::to_string(from) + " out of order: it expects the " + name(*received) + " but rank "
                            + std::to_string(from) + " sends the " + name(*sent) + " then",
                        "a point-to-point channel delivers in send order");
                }
            }
        }
    }
    return ok();
}

} // namespace

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

Status checkIndices(const Schedule& schedule)
{
    const int stages = schedule.stages();
    const int total = schedule.totalMicrobatches();
    if (Status placed = checkStagePlacement(schedule); !placed) {
        return placed;
    }
    std::vector<int> rankOf(static_cast<std::size_t>(stages));
    for (int stage = 0; stage < stages; ++stage) {
        rankOf[static_cast<std::size_t>(stage)] = schedule.rankOf(stage);
    }
    for (int r = 0; r < schedule.ranks(); ++r) {
        const auto& program = schedule.programs[static_cast<std::size_t>(r)];
        for (std::size_t step = 0; step < program.size(); ++step) {
            if (const Action& a = program[step]; !indicesFit(a, r, rankOf.data(), stages, total)) {
                return makeError(ErrorCode::InvalidArgument,
                    "rank " + std::to_string(r) + ", step " + std::to_string(step) + " (" + toString(a)
                        + ") names a stage this rank does not hold or a micro-batch outside 0.."
                        + std::to_string(total - 1));
            }
        }
    }
    return ok();
}

Status detail::validateStepByStep(const Schedule& schedule)
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

Status validate(const Schedule& schedule)
{
    if (!schedule.programs.empty() && checkStagePlacement(schedule)) {
        if (detail::passesInOneWalk(schedule)) {
            return ok();
        }
    }
    return detail::validateStepByStep(schedule); // names the first violation in the checks' order
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
