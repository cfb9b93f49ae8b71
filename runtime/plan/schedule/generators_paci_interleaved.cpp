// PACI on an interleaved (loop) placement: p ranks, v chunks each, S = p·v stages, stage s = c·p + r
// on rank r. Asynchronous: the whole run is one interleaved-1F1B stream of M = m·N micro-batches
// (torch.distributed.pipelining's ScheduleInterleaved1F1B order over M, so warm-up and cool-down
// happen once per run, not per global batch), and each stage (chunk) applies an update after
// every a of its own backwards (PACI's local accumulation, updated in place).
//
// The version-lag bound per chunk (derivation: runtime/train/paci/README.md, "PACI on an interleaved
// placement"). Rank r's forward and backward steps are numbered k = 0, 1, ...; forward step k runs
// chunk (k / p) mod v, backward step t chunk v − 1 − (t / p) mod v, and micro-batches pass each
// chunk in groups of p, in order. After W_r = (v − 1)p + 2(p − 1 − r) warm-up forwards, forward
// step k is followed by backward step k − W_r. So for micro-batch i = g·p + j at stage s, its
// forward is step k = g·pv + c·p + j and its backward step t = g·pv + (v − 1 − c)p + j: the
// backwards the rank runs between them are steps [k − W_r, t), L_s = t − k + W_r = 2(S − 1 − s) of
// them, and the ones of stage s among those are its micro-batches still in flight. Counting stage
// s's steps in that window (they come in blocks of p every pv steps, t at offset j of its block)
// gives D_s(j); D_s = max over j. Updates come after every a-th backward of the stage, so micro-batch
// i crosses ⌊i / a⌋ − ⌊(i − D_s(i mod p)) / a⌋ of them: at most ⌈D_s / a⌉; the bound is the exact
// most of that over i (paciInterleavedLagBound). In warm-up the window only shrinks, so the bound
// holds for every micro-batch.

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/generators.h"

#include <algorithm>
#include <numeric>

namespace bs::runtime {

namespace {

// D_s(j): stage s's backward steps among the L_s = 2(S − 1 − s) the rank runs between the
// forward and the backward of a micro-batch at offset j of its group of p.
int backwardsBetweenAt(int p, int v, int stage, int j)
{
    const int window = 2 * (p * v - 1 - stage);
    int count = std::min(window, j); // the steps of t's own block before it
    for (int before = j + (v - 1) * p; before < window; before += p * v) { // earlier blocks
        count += std::min(p, window - before);
    }
    return count;
}

bool validShape(int p, int v, int stage)
{
    return p >= 1 && v >= 1 && stage >= 0 && stage < p * v;
}

} // namespace

int paciInterleavedBackwardsBetween(int ranks, int stagesPerRank, int stage)
{
    if (!validShape(ranks, stagesPerRank, stage)) {
        return 0;
    }
    int most = 0;
    for (int j = 0; j < ranks; ++j) {
        most = std::max(most, backwardsBetweenAt(ranks, stagesPerRank, stage, j));
    }
    return most;
}

int paciInterleavedLagBound(int ranks, int stagesPerRank, int stage, int accum)
{
    if (!validShape(ranks, stagesPerRank, stage)) {
        return 0;
    }
    if (accum <= 1) {
        return paciInterleavedBackwardsBetween(ranks, stagesPerRank, stage);
    }
    // Micro-batch i (offset j = i mod p) has D = D_s(j) backwards of its stage in between, after
    // i − D of them: it crosses ⌊i / a⌋ − ⌊(i − D) / a⌋ updates, which depends on i mod a and j
    // only. The most over i mod lcm(p, a) (every pair occurs in the steady state) is the bound:
    // at most ⌈D_s / a⌉, and less where the offsets with the largest D never meet the worst
    // alignment (p = v = a = 2, stage 0: 1, not ⌈3 / 2⌉ = 2).
    const int period = std::lcm(ranks, accum);
    const int shift = period * (2 * ranks * stagesPerRank / period + 1); // keeps i − D >= 0
    int most = 0;
    for (int i = shift; i < shift + period; ++i) {
        const int d = backwardsBetweenAt(ranks, stagesPerRank, stage, i % ranks);
        most = std::max(most, i / accum - (i - d) / accum);
    }
    return most;
}

namespace detail {

Schedule makePaciInterleaved(const ScheduleParams& params, int updateEvery)
{
    const int p = params.stages;
    const int v = params.stagesPerRank;
    const int total = params.microbatches * params.batches; // one stream: no flush
    Schedule schedule;
    schedule.params = params;
    schedule.weights = WeightPolicy::InPlace;
    schedule.asynchronous = true;
    schedule.placement = Placement::Loop;
    schedule.rankOfStage = rankOfStageFor(schedule.placement, p, v);
    schedule.programs.resize(static_cast<std::size_t>(p));
    std::vector<int> backwards(static_cast<std::size_t>(p * v), 0); // per stage, so far
    for (int r = 0; r < p; ++r) {
        const std::vector<Action> order = interleavedOneFOneBOrder(r, p, v, total);
        auto& program = schedule.programs[static_cast<std::size_t>(r)];
        program.reserve(order.size() + static_cast<std::size_t>(v * (total / updateEvery + 1)));
        for (const Action& a : order) {
            program.push_back(a);
            if (a.kind != ActionKind::Backward) {
                continue;
            }
            const int done = ++backwards[static_cast<std::size_t>(a.stage)];
            if (done % updateEvery == 0) {
                program.push_back(update(a.stage, done / updateEvery - 1, done - updateEvery, done - 1));
            }
        }
        // Warm-up forwards plus the steady one, as interleaved 1F1B states it (over the stream).
        const int warmup = std::min((v - 1) * p + 2 * (p - 1 - r), total * v);
        schedule.inflightBound.push_back(std::min(total * v, warmup + 1));
    }
    schedule.weightVersionBound.assign(static_cast<std::size_t>(p), 1);
    return schedule;
}

} // namespace detail
} // namespace bs::runtime
