// Schedules with several stages (model chunks) per rank. Each rank's compute order for one global
// batch is built the way torch.distributed.pipelining builds its pipeline_order (schedules.py,
// torch 2.11), without the None padding PyTorch uses to line ranks up in time: the order is what
// matters, timing comes from the scheduler core. tests/runtime/plan/schedule/torch_peer_test checks the
// orders against PyTorch's own schedule objects. Global batches repeat the order with offset
// micro-batch ids, each ended by one update per stage (flush).

#include "runtime/plan/schedule/batch_repeat.h"
#include "runtime/plan/schedule/generators.h"

#include <algorithm>
#include <deque>
#include <map>

namespace bs::runtime::detail {

namespace {

using RankOrder = std::vector<Action>;

// Next micro-batch per (stage, kind): PyTorch's fwd/bwd/weight_stage_mb_index counters.
class Counters
{
public:
    int next(int stage, ActionKind kind) { return m_next[{stage, kind}]++; }

private:
    std::map<std::pair<int, ActionKind>, int> m_next;
};

// PyTorch's _get_warmup_ops.
int warmupOps(int rank, int v, int perRound, int p, int m, int factor)
{
    return std::min((v - 1) * perRound + factor * (p - 1 - rank), m * v);
}

// PyTorch's _get_1f1b_rank_ops for interleaved 1F1B (zeroBubble = false, warm-up factor 2) and
// interleaved zero-bubble ZB1P (zeroBubble = true, factor 1, W after rank 1F1B steps).
RankOrder interleavedOrder(int rank, int p, int v, int m, bool zeroBubble)
{
    const int rounds = std::max(1, m / p);
    const int perRound = m / rounds;
    const int warmup = warmupOps(rank, v, perRound, p, m, zeroBubble ? 1 : 2);
    const int ops = v * m;
    const int fwdBwd = ops - warmup;
    const ActionKind backwardKind = zeroBubble ? ActionKind::BackwardInput : ActionKind::Backward;
    // Step k's chunk is (k / perRound) mod v, forwards ascending from step 0 and backwards
    // descending from step `warmup`: kept as running counts, as are PyTorch's micro-batch indices
    // per stage (fwd/bwd/weight_stage_mb_index) in flat tables; a division and a map lookup per
    // action were about half of paci-interleaved's generation (one stream of m·N micro-batches).
    const auto stages = static_cast<std::size_t>(p) * static_cast<std::size_t>(v);
    std::vector<int> forwards(stages, 0), backwards(stages, 0), weights(stages, 0);
    struct ChunkCycle
    {
        int chunk; // of the next step
        int delta; // +1 or −1 chunk a round
        int left; // steps left in this round
    };
    ChunkCycle forwardCycle{0, 1, perRound}, backwardCycle{v - 1, -1, perRound};
    const auto nextStage = [&](ChunkCycle& cycle) {
        const int stage = cycle.chunk * p + rank;
        if (--cycle.left == 0) {
            cycle.left = perRound;
            cycle.chunk = (cycle.chunk + cycle.delta + v) % v;
        }
        return stage;
    };
    RankOrder order;
    order.reserve(static_cast<std::size_t>(zeroBubble ? 3 * ops : 2 * ops));
    std::vector<int> backwardStages; // of the backwards so far, in order: their W follow them
    std::size_t weightsDone = 0;
    const auto addWeight = [&] {
        const int stage = backwardStages[weightsDone++];
        order.push_back(backwardWeight(stage, weights[static_cast<std::size_t>(stage)]++));
    };
    for (int op = 0; op < warmup + fwdBwd + warmup; ++op) {
        if (op < warmup + fwdBwd) {
            const int stage = nextStage(forwardCycle);
            order.push_back(forward(stage, forwards[static_cast<std::size_t>(stage)]++));
            if (op < warmup) {
                continue;
            }
        }
        const int stage = nextStage(backwardCycle);
        order.push_back({stage, backwardKind, backwards[static_cast<std::size_t>(stage)]++});
        if (zeroBubble) {
            backwardStages.push_back(stage);
            if (op - warmup >= rank) {
                addWeight();
            }
        }
    }
    while (zeroBubble && weightsDone < backwardStages.size()) {
        addWeight();
    }
    return order;
}

// ScheduleLoopedBFS: every chunk forwards all micro-batches, chunks in order; then backwards
// chunk by chunk in reverse, micro-batches in reverse.
RankOrder loopedBfsOrder(int rank, int p, int v, int m)
{
    RankOrder order;
    for (int c = 0; c < v; ++c) {
        for (int mb = 0; mb < m; ++mb) {
            order.push_back(forward(c * p + rank, mb));
        }
    }
    for (int c = v - 1; c >= 0; --c) {
        for (int mb = m - 1; mb >= 0; --mb) {
            order.push_back(backward(c * p + rank, mb));
        }
    }
    return order;
}

// ScheduleZBVZeroBubble: chunk 0 is stage r, chunk 1 stage 2p − 1 − r. Planned for at least
// 2p − 1 micro-batches; the ones past m are dropped afterwards, as PyTorch does.
RankOrder zbvOrder(int rank, int p, int m)
{
    const int n = std::max(2 * p - 1, m);
    const int s0 = rank;
    const int s1 = 2 * p - 1 - rank;
    int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    RankOrder order;
    for (int i = 0; i < 2 * (p - rank) - 1; ++i) {
        order.push_back(forward(s0, f0++));
    }
    for (int i = 0; i < rank; ++i) {
        order.push_back(forward(s1, f1++));
        order.push_back(forward(s0, f0++));
    }
    for (int i = 0; i < p - rank; ++i) {
        order.push_back(forward(s1, f1++));
        order.push_back(backwardInput(s1, b1));
        order.push_back(backwardWeight(s1, b1++));
    }
    while (f1 < f0 || f0 < n) {
        if (f0 < n) {
            order.push_back(forward(s0, f0++));
        }
        order.push_back(backwardInput(s0, b0));
        order.push_back(backwardWeight(s0, b0++));
        order.push_back(forward(s1, f1++));
        order.push_back(backwardInput(s1, b1));
        order.push_back(backwardWeight(s1, b1++));
    }
    int w0 = b0, w1 = b1;
    for (int i = 0; i < rank; ++i) {
        order.push_back(backwardInput(s0, b0++));
        order.push_back(backwardInput(s1, b1++));
    }
    for (int i = 0; i < p - rank; ++i) {
        order.push_back(backwardInput(s0, b0++));
        order.push_back(backwardWeight(s0, w0++));
    }
    while (w1 < b1) {
        order.push_back(backwardWeight(s1, w1++));
    }
    while (w0 < b0) {
        order.push_back(backwardWeight(s0, w0++));
    }
    std::erase_if(order, [m](const Action& a) { return a.microbatch >= m; });
    return order;
}

// ScheduleDualPipeV (DeepSeek's DualPipeV as torch ports it): eight phases per rank, the main
// one made of overlapped forward-and-backward pairs; the second half of the last backwards are
// split (I now, W later) to fill the drain.
class DualPipeVBuilder
{
public:
    DualPipeVBuilder(int rank, int p)
        : m_s0(rank)
        , m_s1(2 * p - 1 - rank)
    {}

    RankOrder build(int rank, int p, int m)
    {
        for (int i = 0; i < (p - rank - 1) * 2; ++i) {
            add(m_s0, ActionKind::Forward);
        }
        for (int i = 0; i < rank + 1; ++i) {
            add(m_s0, ActionKind::Forward);
            add(m_s1, ActionKind::Forward);
        }
        for (int i = 0; i < p - rank - 1; ++i) {
            add(m_s1, ActionKind::BackwardInput);
            addPendingWeight();
            add(m_s1, ActionKind::Forward);
        }
        for (int i = 0; i < m - 2 * p + rank + 1; ++i) {
            if (i == 0 && rank == p - 1) { // not overlapped: shortens the bubble (as DualPipe does)
                add(m_s0, ActionKind::Forward);
                add(m_s1, ActionKind::Backward);
            } else {
                addOverlap(m_s0, m_s1);
            }
            addOverlap(m_s1, m_s0);
        }
        for (int i = 0; i < p - rank - 1; ++i) {
            add(m_s1, ActionKind::Backward);
            addOverlap(m_s1, m_s0);
        }
        bool split = false;
        const int last = rank + 1;
        for (int i = 0; i < last; ++i) {
            if (i == last / 2 && rank % 2 == 1) {
                split = true;
            }
            add(m_s1, split ? ActionKind::BackwardInput : ActionKind::Backward);
            if (i == last / 2 && rank % 2 == 0) {
                split = true;
            }
            add(m_s0, split ? ActionKind::BackwardInput : ActionKind::Backward);
        }
        for (int i = 0; i < p - rank - 1; ++i) {
            addPendingWeight();
            add(m_s0, split ? ActionKind::BackwardInput : ActionKind::Backward);
        }
        for (int i = 0; i < rank + 1; ++i) {
            addPendingWeight();
        }
        return std::move(m_order);
    }

private:
    // A full backward consumes the input-gradient counter (PyTorch keys B by I).
    void add(int stage, ActionKind kind)
    {
        const ActionKind key = kind == ActionKind::Backward ? ActionKind::BackwardInput : kind;
        const int mb = m_counters.next(stage, key);
        m_order.push_back({stage, kind, mb});
        if (kind == ActionKind::BackwardInput) {
            m_weights.emplace_back(stage, mb);
        }
    }
    void addOverlap(int forwardStage, int backwardStage)
    {
        const int f = m_counters.next(forwardStage, ActionKind::Forward);
        const int b = m_counters.next(backwardStage, ActionKind::BackwardInput);
        m_order.push_back(overlapForwardBackward(forwardStage, f, backwardStage, b));
    }
    void addPendingWeight()
    {
        if (!m_weights.empty()) {
            m_order.push_back(backwardWeight(m_weights.front().first, m_weights.front().second));
            m_weights.pop_front();
        }
    }

    int m_s0, m_s1;
    Counters m_counters;
    std::deque<std::pair<int, int>> m_weights;
    RankOrder m_order;
};

RankOrder rankOrder(const ScheduleParams& params, ScheduleOrder order, int rank)
{
    const int p = params.stages;
    const int v = params.stagesPerRank;
    const int m = params.microbatches;
    if (order == ScheduleOrder::Interleaved1F1B) {
        return interleavedOrder(rank, p, v, m, false);
    }
    if (order == ScheduleOrder::InterleavedZeroBubble) {
        return interleavedOrder(rank, p, v, m, true);
    }
    if (order == ScheduleOrder::LoopedBfs) {
        return loopedBfsOrder(rank, p, v, m);
    }
    if (order == ScheduleOrder::ZeroBubbleV) {
        return zbvOrder(rank, p, m);
    }
    return DualPipeVBuilder(rank, p).build(rank, p, m);
}

// In-flight bound per rank, counted in stage-micro-batches (forward done, B or I not yet), as
// each schedule's authors state the activation memory.
int inflightBoundFor(const ScheduleParams& params, ScheduleOrder order, int rank)
{
    const int p = params.stages;
    const int v = params.stagesPerRank;
    const int m = params.microbatches;
    const int all = v * m;
    const int perRound = m / std::max(1, m / p);
    if (order == ScheduleOrder::Interleaved1F1B) { // Megatron: warm-up forwards plus the steady one
        return std::min(all, warmupOps(rank, v, perRound, p, m, 2) + 1);
    }
    if (order == ScheduleOrder::InterleavedZeroBubble) {
        return std::min(all, warmupOps(rank, v, perRound, p, m, 1) + 1);
    }
    // ZB-V paper §6: 1F1B's memory, p micro-batches of a whole rank = 2p chunks.
    if (order == ScheduleOrder::ZeroBubbleV) {
        return std::min(all, 2 * p);
    }
    if (order == ScheduleOrder::DualPipeV) { // DualPipe README: PP + 1 chunk activations, PP = 2p stages
        return std::min(all, 2 * p + 1);
    }
    return all; // looped-bfs holds every micro-batch of every chunk, like GPipe
}

// Activation memory from F to the W that frees it, where a split backward makes it differ from
// the in-flight bound; 0 = not stated separately.
int activationBoundFor(const ScheduleParams& params, ScheduleOrder order, int rank)
{
    const int p = params.stages;
    const int all = params.stagesPerRank * params.microbatches;
    if (order == ScheduleOrder::ZeroBubbleV) { // ZB-V paper §6: the same activation memory as 1F1B
        return std::min(all, 2 * p);
    }
    if (order == ScheduleOrder::DualPipeV) {
        return std::min(all, 2 * p + 1);
    }
    if (order == ScheduleOrder::InterleavedZeroBubble) { // ZB1P: W trails by `rank` steps on top of the warm-up
        return std::min(all, inflightBoundFor(params, order, rank) + rank);
    }
    return 0;
}

} // namespace

std::vector<Action> interleavedZeroBubbleOrder(int rank, int p, int v, int m)
{
    return interleavedOrder(rank, p, v, m, true);
}

std::vector<Action> interleavedOneFOneBOrder(int rank, int p, int v, int m)
{
    return interleavedOrder(rank, p, v, m, false);
}

Schedule makeMultiStage(const ScheduleParams& params, ScheduleOrder order)
{
    const int p = params.stages;
    const int m = params.microbatches;
    Schedule schedule;
    schedule.params = params;
    schedule.weights = WeightPolicy::Flush;
    schedule.placement = params.placement.value_or(Placement::Loop);
    schedule.splitBackward = order != ScheduleOrder::Interleaved1F1B && order != ScheduleOrder::LoopedBfs;
    schedule.rankOfStage = rankOfStageFor(schedule.placement, p, params.stagesPerRank);
    schedule.programs.resize(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
        RankOrder batch = rankOrder(params, order, r); // batch 0; appendBatches() moves it on
        std::vector<int> own; // this rank's stages, ascending: their updates end each batch
        for (int s = 0; s < schedule.stages(); ++s) {
            if (schedule.rankOf(s) == r) {
                own.push_back(s);
            }
        }
        for (int s : own) {
            batch.push_back(update(s, 0, 0, m - 1));
        }
        appendBatches(schedule.programs[static_cast<std::size_t>(r)], batch, m, params.batches);
        schedule.inflightBound.push_back(inflightBoundFor(params, order, r));
        if (const int memory = activationBoundFor(params, order, r); memory > 0) {
            schedule.activationBound.push_back(memory);
        }
    }
    schedule.weightVersionBound.assign(static_cast<std::size_t>(p), 1);
    return schedule;
}

} // namespace bs::runtime::detail
