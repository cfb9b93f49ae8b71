// Asynchronous 1F1B family: no flush. Stage s keeps d = p − s + k micro-batches in flight, so its
// program is d − 1 warm-up forwards, then (F, B) pairs forever, then the cool-down backwards of the
// last global batch. They differ only in when updates happen and which weights a backward sees.

#include "runtime/plan/schedule/generators.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bs::runtime::detail {

namespace {

// Appends one stage's F and B in order to its program, with an update after every
// `updateEvery`-th local backward; finish() applies a partial window at the end. The program is
// written once, in place, its size known up front (a long run's is tens of MB).
class StageProgramWriter
{
public:
    StageProgramWriter(std::vector<Action>& program, int stage, int total, int updateEvery)
        : m_program(program)
        , m_stage(stage)
        , m_total(total)
        , m_updateEvery(updateEvery)
    {
        m_program.reserve(2 * static_cast<std::size_t>(total) + static_cast<std::size_t>(total / updateEvery + 1));
    }
    void append(const Action& a)
    {
        m_program.push_back(a);
        if (a.kind == ActionKind::Backward && ++m_backwards % m_updateEvery == 0) {
            m_program.push_back(update(m_stage, m_updates++, m_backwards - m_updateEvery, m_backwards - 1));
        }
    }
    void finish()
    {
        if (m_total % m_updateEvery != 0) {
            m_program.push_back(update(m_stage, m_updates, m_total - m_total % m_updateEvery, m_total - 1));
        }
    }

private:
    std::vector<Action>& m_program;
    int m_stage, m_total, m_updateEvery;
    int m_backwards = 0, m_updates = 0;
};

// Per-stage order of F and B for the whole run, as PACI's runtime produces it (paci.md §2.3):
// a free stage runs the oldest backward whose gradient has arrived, else the next forward if its
// input has arrived and fewer than `depth[s]` micro-batches are in flight. Planned with T_F = 100,
// T_B = 200 and the given comm ratio. With comm = 0 this is exactly the textbook alternation.
// Each stage's next start is kept and recomputed only where an action changed it (its own stage
// and the one it sends to): a scan of every stage's inputs per action was most of a long run's
// generation.
void runtimeOrder(
    int p, int total, const std::vector<int>& depth, double commRatio, std::vector<StageProgramWriter>& out)
{
    constexpr long kF = 100, kB = 200;
    constexpr long kNever = std::numeric_limits<long>::max();
    const long comm = std::lround(static_cast<double>(kF) * std::max(0.0, commRatio));
    const auto P = static_cast<std::size_t>(p);
    const auto M = static_cast<std::size_t>(total);
    std::vector<std::vector<long>> inputAt(P, std::vector<long>(M, kNever)); // activation arrival
    std::vector<std::vector<long>> gradAt(P, std::vector<long>(M, kNever)); // gradient arrival
    std::vector<long> freeAt(P, 0);
    std::vector<int> nextF(P, 0), nextB(P, 0);
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
    auto startOf = [&](std::size_t s) {
        const long ready = std::min(gradReady(s), fwdReady(s));
        return ready == kNever ? kNever : std::max(freeAt[s], ready);
    };
    std::vector<long> start(P);
    for (std::size_t s = 0; s < P; ++s) {
        start[s] = startOf(s);
    }
    for (std::size_t done = 0; done < 2 * P * M; ++done) {
        std::size_t best = P;
        long bestTime = kNever;
        for (std::size_t s = 0; s < P; ++s) {
            if (start[s] < bestTime) { // ties to the lower stage
                bestTime = start[s];
                best = s;
            }
        }
        const std::size_t s = best;
        const int stage = static_cast<int>(s);
        std::size_t touched = P; // the neighbour whose input this action produced
        if (gradReady(s) <= bestTime) {
            const auto mb = static_cast<std::size_t>(nextB[s]++);
            out[s].append(backward(stage, static_cast<int>(mb)));
            freeAt[s] = bestTime + kB;
            if (s > 0) {
                gradAt[s - 1][mb] = freeAt[s] + comm;
                touched = s - 1;
            }
        } else {
            const auto mb = static_cast<std::size_t>(nextF[s]++);
            out[s].append(forward(stage, static_cast<int>(mb)));
            freeAt[s] = bestTime + kF;
            if (s + 1 < P) {
                inputAt[s + 1][mb] = freeAt[s] + comm;
                touched = s + 1;
            }
        }
        start[s] = startOf(s);
        if (touched < P) {
            start[touched] = startOf(touched);
        }
    }
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
    // Updates: after every `updateEvery`-th local backward; a partial window at the end still applies.
    std::vector<StageProgramWriter> programs;
    programs.reserve(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
        programs.emplace_back(schedule.programs[static_cast<std::size_t>(s)], s, total, updateEvery);
    }
    // Textbook order: d − 1 warm-up forwards, then (F, B) pairs, then the cool-down backwards.
    // With an extra depth k the runtime's own rule decides instead (see runtimeOrder).
    if (params.extraDepth > 0) {
        runtimeOrder(p, total, schedule.inflightBound, params.commRatio, programs);
    } else {
        for (int s = 0; s < p; ++s) {
            const int depth = schedule.inflightBound[static_cast<std::size_t>(s)];
            StageProgramWriter& program = programs[static_cast<std::size_t>(s)];
            for (int i = 0; i < depth - 1; ++i) {
                program.append(forward(s, i));
            }
            for (int j = 0; j < total; ++j) {
                if (j + depth - 1 < total) {
                    program.append(forward(s, j + depth - 1));
                }
                program.append(backward(s, j));
            }
        }
    }
    for (StageProgramWriter& program : programs) {
        program.finish();
    }
    return schedule;
}

} // namespace bs::runtime::detail
