// Zero-bubble schedules (Qi et al., "Zero Bubble Pipeline Parallelism", 2023), built the way the
// paper's heuristic builds them: list-schedule with unit costs T_F = T_I = T_W and no comm,
// input-gradients (I) first so the backward critical path carries no weight-gradient work,
// forwards next within the in-flight bound, weight-gradients (W) into whatever time is left.
// ZB-H1 keeps 1F1B's in-flight bound p − s (same activation memory); ZB-H2 allows 2(p − s) − 1,
// which fills the warm-up and cool-down and, with flushes, tiles consecutive batches.
//
// The result is a static per-stage order like any other schedule: it is then validated and
// executed with real costs by the scheduler core.

#include "runtime/plan/schedule/batch_repeat.h"
#include "runtime/plan/schedule/generators.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>

namespace bs::runtime::detail {

namespace {

constexpr long kNever = std::numeric_limits<long>::max();

struct StageState
{
    long freeAt = 0;
    int nextForward = 0; // next micro-batch to forward
    std::deque<int> awaitingInput; // forwarded, input-gradient not done (FIFO)
    std::deque<int> awaitingWeight; // input-gradient done, weight-gradient not done (FIFO)
    int doneWeights = 0; // of the current batch
    int batch = 0; // batch whose update is still pending
};

class ZeroBubbleBuilder
{
public:
    ZeroBubbleBuilder(const ScheduleParams& params, std::vector<int> bound, std::vector<int> weightBacklog, int liveCap)
        : m_p(params.stages)
        , m_m(params.microbatches)
        , m_total(params.microbatches * params.batches)
        , m_bound(std::move(bound))
        , m_weightBacklog(std::move(weightBacklog))
        , m_liveCap(liveCap)
        , m_stages(static_cast<std::size_t>(m_p))
        , m_forwardEnd(static_cast<std::size_t>(m_p), std::vector<long>(static_cast<std::size_t>(m_total), kNever))
        , m_inputGradEnd(static_cast<std::size_t>(m_p), std::vector<long>(static_cast<std::size_t>(m_total), kNever))
        , m_programs(static_cast<std::size_t>(m_p))
    {
        for (auto& program : m_programs) { // exact size: F, I, W per micro-batch and U per batch
            program.reserve(static_cast<std::size_t>(3 * m_total + params.batches));
        }
    }

    /// The programs, every action list-scheduled.
    std::vector<std::vector<Action>> build()
    {
        std::vector<long> decision(static_cast<std::size_t>(m_p));
        for (int s = 0; s < m_p; ++s) {
            decision[static_cast<std::size_t>(s)] = decisionTime(s);
        }
        for (;;) {
            int best = -1;
            long bestTime = kNever;
            for (int s = 0; s < m_p; ++s) {
                if (decision[static_cast<std::size_t>(s)] < bestTime) {
                    bestTime = decision[static_cast<std::size_t>(s)];
                    best = s;
                }
            }
            if (best < 0) {
                break; // every stage is done (a legal schedule never stalls here)
            }
            act(best, bestTime);
            // An action changes only its own stage and the inputs of its two neighbours.
            for (int s = std::max(0, best - 1); s <= std::min(m_p - 1, best + 1); ++s) {
                decision[static_cast<std::size_t>(s)] = decisionTime(s);
            }
        }
        return std::move(m_programs);
    }

private:
    StageState& st(int s) { return m_stages[static_cast<std::size_t>(s)]; }
    long forwardEnd(int s, int mb) const
    {
        return m_forwardEnd[static_cast<std::size_t>(s)][static_cast<std::size_t>(mb)];
    }
    long inputGradEnd(int s, int mb) const
    {
        return m_inputGradEnd[static_cast<std::size_t>(s)][static_cast<std::size_t>(mb)];
    }

    // When stage s's next input-gradient can start (its gradient has arrived), or kNever.
    long inputGradReady(int s)
    {
        auto& state = st(s);
        if (state.awaitingInput.empty()) {
            return kNever;
        }
        const int mb = state.awaitingInput.front();
        return s == m_p - 1 ? forwardEnd(s, mb) : inputGradEnd(s + 1, mb);
    }

    // When stage s's next forward can start, or kNever (bound reached, batch not yet updated).
    long forwardReady(int s)
    {
        auto& state = st(s);
        const int mb = state.nextForward;
        if (mb >= m_total || static_cast<int>(state.awaitingInput.size()) >= m_bound[static_cast<std::size_t>(s)]) {
            return kNever;
        }
        // Activation memory: a micro-batch holds activations from its F until its W.
        if (static_cast<int>(state.awaitingInput.size() + state.awaitingWeight.size()) >= m_liveCap) {
            return kNever;
        }
        if (mb / m_m != state.batch) {
            return kNever; // synchronous: the next batch waits for this stage's update
        }
        return s == 0 ? 0 : forwardEnd(s - 1, mb);
    }

    long decisionTime(int s)
    {
        auto& state = st(s);
        const bool canWeight = !state.awaitingWeight.empty();
        long ready = std::min(inputGradReady(s), forwardReady(s));
        if (canWeight) {
            ready = std::min(ready, state.freeAt);
        }
        return ready == kNever ? kNever : std::max(state.freeAt, ready);
    }

    void act(int s, long now)
    {
        auto& state = st(s);
        auto& program = m_programs[static_cast<std::size_t>(s)];
        const bool backlogFull =
            static_cast<int>(state.awaitingWeight.size()) >= m_weightBacklog[static_cast<std::size_t>(s)];
        if (!backlogFull && inputGradReady(s) <= now) {
            const int mb = state.awaitingInput.front();
            state.awaitingInput.pop_front();
            state.awaitingWeight.push_back(mb);
            program.push_back(backwardInput(s, mb));
            m_inputGradEnd[static_cast<std::size_t>(s)][static_cast<std::size_t>(mb)] = now + 1;
        } else if (!backlogFull && forwardReady(s) <= now) {
            const int mb = state.nextForward++;
            state.awaitingInput.push_back(mb);
            program.push_back(forward(s, mb));
            m_forwardEnd[static_cast<std::size_t>(s)][static_cast<std::size_t>(mb)] = now + 1;
        } else {
            const int mb = state.awaitingWeight.front();
            state.awaitingWeight.pop_front();
            program.push_back(backwardWeight(s, mb));
            if (++state.doneWeights == m_m) { // the batch's last gradient: update, then next batch
                program.push_back(update(s, state.batch, state.batch * m_m, state.batch * m_m + m_m - 1));
                state.doneWeights = 0;
                ++state.batch;
            }
        }
        state.freeAt = now + 1;
    }

    int m_p, m_m, m_total;
    std::vector<int> m_bound;
    std::vector<int> m_weightBacklog; // deferred weight-gradients allowed per stage before W is forced
    int m_liveCap; // micro-batches between F and W a stage may hold
    std::vector<StageState> m_stages;
    std::vector<std::vector<long>> m_forwardEnd;
    std::vector<std::vector<long>> m_inputGradEnd;
    std::vector<std::vector<Action>> m_programs;
};

} // namespace

Schedule makeZeroBubble(const ScheduleParams& params, bool h2)
{
    const int p = params.stages;
    const int m = params.microbatches;
    Schedule schedule;
    schedule.params = params;
    schedule.weights = WeightPolicy::Flush;
    schedule.splitBackward = true;
    for (int s = 0; s < p; ++s) {
        const int oneFOneB = std::min(p - s, m);
        schedule.inflightBound.push_back(h2 ? std::min(2 * (p - s) - 1, m) : oneFOneB);
        // The authors' memory promise, counted from F to W: 1F1B's p, or 2p for ZB-H2.
        schedule.activationBound.push_back(std::min(h2 ? 2 * p : p, m));
    }
    schedule.weightVersionBound.assign(static_cast<std::size_t>(p), 1);
    if (!h2) {
        // ZB-H1 is the authors' ZB1P shape (PyTorch's ScheduleInterleavedZeroBubble with one
        // stage per rank): stage s delays each W by s steps, so F..W holds at most p micro-batches
        // and the bubble is (p − 1)(F + I − W).
        schedule.programs.resize(static_cast<std::size_t>(p));
        for (int s = 0; s < p; ++s) {
            std::vector<Action> batch = interleavedZeroBubbleOrder(s, p, 1, m);
            batch.push_back(update(s, 0, 0, m - 1));
            appendBatches(schedule.programs[static_cast<std::size_t>(s)], batch, m, params.batches);
        }
        return schedule;
    }
    // ZB-H2: the list scheduler with up to 2(p − s) − 1 in flight and W deferred freely, within the
    // 2p micro-batches of activation memory the authors state.
    const std::vector<int> backlog(static_cast<std::size_t>(p), m);
    ZeroBubbleBuilder builder(params, schedule.inflightBound, backlog, 2 * p);
    schedule.programs = builder.build();
    return schedule;
}

} // namespace bs::runtime::detail
