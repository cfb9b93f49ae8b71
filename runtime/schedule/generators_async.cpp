// Asynchronous 1F1B family: no flush. Stage s keeps d = p − s + k micro-batches in flight, so its
// program is d − 1 warm-up forwards, then (F, B) pairs forever, then the cool-down backwards of the
// last global batch. They differ only in when updates happen and which weights a backward sees.

#include "runtime/schedule/generators.h"

#include "base/huge_pages.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

namespace bs::runtime::detail {

namespace {

// Per-stage order of F and B for the whole run, as PACI's runtime produces it (paci.md §2.3):
// a free stage runs the oldest backward whose gradient has arrived, else the next forward if its
// input has arrived and fewer than `depth[s]` micro-batches are in flight. Planned with T_F = 100,
// T_B = 200 and the given comm ratio. With comm = 0 this is exactly the textbook alternation.
std::vector<std::vector<Action>> runtimeOrder(int p, int total, const std::vector<int>& depth, double commRatio)
{
    constexpr long kF = 100, kB = 200;
    constexpr long kNever = std::numeric_limits<long>::max();
    const long comm = std::lround(static_cast<double>(kF) * std::max(0.0, commRatio));
    const auto P = static_cast<std::size_t>(p);
    const auto M = static_cast<std::size_t>(total);
    std::vector<std::vector<long>> inputAt(P, std::vector<long>(M, kNever));   // activation arrival
    std::vector<std::vector<long>> gradAt(P, std::vector<long>(M, kNever));    // gradient arrival
    std::vector<long> freeAt(P, 0);
    std::vector<int> nextF(P, 0), nextB(P, 0);
    std::vector<std::vector<Action>> order(P);
    for (std::size_t mb = 0; mb < M; ++mb) {
        inputAt[0][mb] = 0;
    }
    auto gradReady = [&](std::size_t s) {
        const int b = nextB[s];
        if (b >= nextF[s]) {
            return kNever;
        }
        return s + 1 == P ? freeAt[s] : gradAt[s][static_cast<std::size_t>(b)];
    };
    auto fwdReady = [&](std::size_t s) {
        const int f = nextF[s];
        if (f >= total || f - nextB[s] >= depth[s]) {
            return kNever;
        }
        return inputAt[s][static_cast<std::size_t>(f)];
    };
    for (std::size_t done = 0; done < 2 * P * M;) {
        std::size_t best = P;
        long bestTime = kNever;
        for (std::size_t s = 0; s < P; ++s) {
            const long ready = std::min(gradReady(s), fwdReady(s));
            const long t = ready == kNever ? kNever : std::max(freeAt[s], ready);
            if (t < bestTime) {
                bestTime = t;
                best = s;
            }
        }
        const std::size_t s = best;
        const int stage = static_cast<int>(s);
        if (gradReady(s) <= bestTime) {
            const auto mb = static_cast<std::size_t>(nextB[s]++);
            order[s].push_back(backward(stage, static_cast<int>(mb)));
            freeAt[s] = bestTime + kB;
            if (s > 0) {
                gradAt[s - 1][mb] = freeAt[s] + comm;
            }
        } else {
            const auto mb = static_cast<std::size_t>(nextF[s]++);
            order[s].push_back(forward(stage, static_cast<int>(mb)));
            freeAt[s] = bestTime + kF;
            if (s + 1 < P) {
                inputAt[s + 1][mb] = freeAt[s] + comm;
            }
        }
        ++done;
    }
    return order;
}

} // namespace

Schedule makeAsyncOneFOneB(const ScheduleParams& params, int updateEvery, WeightPolicy policy)
{
    const int p = params.stages;
    const int total = params.microbatches * params.batches;
    Schedule schedule;
    schedule.params = params;
    schedule.weights = policy;
    schedule.asynchronous = true;
    schedule.programs.resize(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
        const int depth = std::min(p - s + params.extraDepth, total);
        schedule.inflightBound.push_back(depth);
        int versions = 1;
        if (policy == WeightPolicy::Stash) {
            versions = depth; // one stashed copy per in-flight micro-batch's forward version
        } else if (policy == WeightPolicy::TwoVersions) {
            versions = 2;
        }
        schedule.weightVersionBound.push_back(versions);
    }
    // Textbook order: d − 1 warm-up forwards, then (F, B) pairs, then the cool-down backwards.
    // With an extra depth k the runtime's own rule decides instead (see runtimeOrder).
    std::vector<std::vector<Action>> order;
    if (params.extraDepth > 0) {
        order = runtimeOrder(p, total, schedule.inflightBound, params.commRatio);
    } else {
        order.resize(static_cast<std::size_t>(p));
        for (int s = 0; s < p; ++s) {
            const int depth = schedule.inflightBound[static_cast<std::size_t>(s)];
            auto& stageOrder = order[static_cast<std::size_t>(s)];
            for (int i = 0; i < depth - 1; ++i) {
                stageOrder.push_back(forward(s, i));
            }
            for (int j = 0; j < total; ++j) {
                if (j + depth - 1 < total) {
                    stageOrder.push_back(forward(s, j + depth - 1));
                }
                stageOrder.push_back(backward(s, j));
            }
        }
    }
    // Updates: after every `updateEvery`-th local backward; a partial window at the end still applies.
    for (int s = 0; s < p; ++s) {
        auto& program = schedule.programs[static_cast<std::size_t>(s)];
        reserveAdvised(program, order[static_cast<std::size_t>(s)].size() + static_cast<std::size_t>(total / updateEvery + 1));
        int backwards = 0, updates = 0;
        for (const Action& a : order[static_cast<std::size_t>(s)]) {
            program.push_back(a);
            if (a.kind == ActionKind::Backward && ++backwards % updateEvery == 0) {
                program.push_back(update(s, updates++, backwards - updateEvery, backwards - 1));
            }
        }
        if (total % updateEvery != 0) {
            program.push_back(update(s, updates, total - total % updateEvery, total - 1));
        }
    }
    return schedule;
}

} // namespace bs::runtime::detail
