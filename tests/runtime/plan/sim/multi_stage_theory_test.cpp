// Closed forms for the schedules with several stages per rank, exact in integer virtual time.
// A cost model entry describes a rank; each of its v chunks costs 1/v of it (simulator.cpp).

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace bs::runtime {
namespace {

SimulationResult run(const std::string& name, int p, int m, const CostModel& costs, int v = 0)
{
    SimulationRequest request{
        {.name = name, .stages = p, .microbatches = m, .batches = 1, .stagesPerRank = v}, costs, 1};
    auto result = simulate(request);
    EXPECT_TRUE(result) << result.error().describe();
    return std::move(*result);
}

TimeNs maxIdle(const profiler::Report& report)
{
    TimeNs most = 0;
    for (const auto& st : report.perStage) {
        most = std::max(most, st.idle);
    }
    return most;
}

// Megatron's interleaved 1F1B, m a multiple of p, no comm: bubble fraction (p − 1)/(v·m + p − 1),
// exactly; activation memory per rank (in chunk-micro-batches) the warm-up plus one,
// (v − 1)·p + 2(p − 1 − r) + 1, as Megatron's schedule states it.
TEST(MultiStageTheory, InterleavedOneFOneBBubbleIsPMinusOneOverVmPlusPMinusOne)
{
    for (int p : {2, 4, 8}) {
        for (int v : {2, 3, 4}) {
            for (int m : {p, 2 * p, 4 * p}) {
                const auto r = run("interleaved-1f1b", p, m, CostModel::uniform(1, 1200, 1200, 1200), v);
                const auto& rep = r.report;
                EXPECT_EQ(rep.totalIdle * (v * m + p - 1), static_cast<TimeNs>(p - 1) * p * rep.makespan)
                    << "p=" << p << " v=" << v << " m=" << m;
                for (const auto& st : rep.perStage) {
                    EXPECT_EQ(st.peakInflight, std::min(v * m, (v - 1) * p + 2 * (p - 1 - st.stage) + 1))
                        << "p=" << p << " v=" << v << " m=" << m << " rank " << st.stage;
                    // Memory counts each chunk's activations of a micro-batch apart (a full B frees them).
                    EXPECT_EQ(st.peakMemoryBytes, st.peakInflight) << "p=" << p << " v=" << v << " m=" << m;
                }
            }
        }
    }
}

// Looped BFS runs every chunk's micro-batches breadth-first: the same bubble as interleaved 1F1B
// under unit costs, but GPipe's memory (every chunk's every micro-batch at once).
TEST(MultiStageTheory, LoopedBfsHasTheInterleavedBubbleAndGpipeMemory)
{
    const int p = 4, v = 2, m = 8;
    const auto r = run("looped-bfs", p, m, CostModel::uniform(1, 1000, 1000, 1000), v);
    EXPECT_EQ(r.report.totalIdle * (v * m + p - 1), static_cast<TimeNs>(p - 1) * p * r.report.makespan);
    for (const auto& st : r.report.perStage) {
        EXPECT_EQ(st.peakInflight, v * m);
    }
}

// ZB-V with F = I = W: zero bubble in the steady phase, so more micro-batches add no idle time
// at all; what idles is the fill and drain, (p − 1)·F per rank. Memory: 1F1B's p micro-batches
// of a whole rank, 2p chunk activations (ZB-V paper §6).
TEST(MultiStageTheory, ZbvHasZeroSteadyBubbleWhenFEqualsBEqualsW)
{
    for (int p : {2, 4, 8}) {
        const TimeNs chunk = 1000;
        const CostModel costs = CostModel::uniform(1, 2 * chunk, 2 * chunk, 2 * chunk);
        for (int m : {2 * p, 4 * p, 8 * p}) {
            const auto r = run("zb-v", p, m, costs);
            for (const auto& st : r.report.perStage) {
                EXPECT_EQ(st.idle, (p - 1) * chunk) << "p=" << p << " m=" << m << " rank " << st.stage;
                EXPECT_EQ(st.peakInflight, 2 * p) << "p=" << p << " m=" << m << " rank " << st.stage;
            }
        }
    }
}

// DualPipe's README: bubble (PP/2 − 1)(F&B + B − 3W) with PP = 2p stages, B the full backward and
// F&B the overlapped pair's own time. Exact here, for any F&B, when F = I = W: it is the bubble of
// the ranks that idle most. Activation memory PP + 1 = 2p + 1 chunk activations per rank.
TEST(MultiStageTheory, DualPipeVBubbleIsTheReadmeFormula)
{
    const TimeNs f = 1000, w = 1000, b = 2 * w;
    for (TimeNs pair : {TimeNs{0}, TimeNs{2000}, TimeNs{2500}, TimeNs{3000}}) {
        for (int p : {2, 4, 6, 8}) {
            CostModel costs = CostModel::uniform(2 * p, f, w, w); // one entry per stage (chunk)
            for (auto& stage : costs.stages) {
                stage.forwardBackward = pair;
            }
            const TimeNs fb = pair > 0 ? pair : f + b; // 0: no overlap gain
            const auto r = run("dualpipev", p, 3 * p, costs);
            EXPECT_EQ(maxIdle(r.report), (p - 1) * (fb + b - 3 * w)) << "p=" << p << " F&B=" << fb;
            for (const auto& st : r.report.perStage) {
                EXPECT_EQ(st.peakInflight, 2 * p + 1) << "p=" << p << " rank " << st.stage;
            }
        }
    }
}

// The overlapped pair is its own action with its own cost: making it cheaper shortens the run.
TEST(MultiStageTheory, DualPipeVOverlapCostIsItsOwn)
{
    CostModel slow = CostModel::uniform(8, 1000, 1000, 1000);
    CostModel fast = slow;
    for (auto& stage : fast.stages) {
        stage.forwardBackward = 2000; // hides a third of F + B
    }
    const auto a = run("dualpipev", 4, 16, slow);
    const auto b = run("dualpipev", 4, 16, fast);
    EXPECT_LT(b.report.makespan, a.report.makespan);
}

} // namespace
} // namespace bs::runtime
