// Where pipeline theory is exact, the simulator must be exact: virtual time is integer ns, so
// these compare rationals by cross-multiplication, never with a tolerance.

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/validate.h"
#include "runtime/plan/sim/simulator.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

constexpr TimeNs kF = 1000; // uniform costs: F = I = W, full backward B = 2F

SimulationResult run(const std::string& name, int p, int m, int n = 1, int accum = 0, TimeNs comm = 0)
{
    SimulationRequest request{{.name = name, .stages = p, .microbatches = m, .accum = accum, .batches = n},
        CostModel::uniform(p, kF, kF, kF, 0, comm), 1};
    auto result = simulate(request);
    EXPECT_TRUE(result) << result.error().describe();
    return std::move(*result);
}

class SyncBubble : public testing::TestWithParam<std::tuple<std::string, int, int>>
{};

// GPipe and 1F1B, one global batch: bubble fraction exactly (p − 1)/(m + p − 1).
TEST_P(SyncBubble, FractionIsExactlyPMinusOneOverMPlusPMinusOne)
{
    const auto& [name, p, m] = GetParam();
    const auto r = run(name, p, m);
    const auto& rep = r.report;
    // idle / (p · makespan) == (p − 1)/(m + p − 1)
    EXPECT_EQ(rep.totalIdle * (m + p - 1), static_cast<TimeNs>(p - 1) * p * rep.makespan);
    EXPECT_EQ(rep.makespan, static_cast<TimeNs>(m + p - 1) * 3 * kF);
    EXPECT_DOUBLE_EQ(rep.bubbleFraction, static_cast<double>(p - 1) / (m + p - 1));
    for (const auto& st : rep.perStage) {
        const int expected = name == "gpipe" ? m : std::min(p - st.stage, m);
        EXPECT_EQ(st.peakInflight, expected) << name << " stage " << st.stage;
    }
}

INSTANTIATE_TEST_SUITE_P(Theory, SyncBubble,
    testing::Combine(testing::Values("gpipe", "1f1b"), testing::Values(1, 2, 4, 8), testing::Values(1, 4, 8, 16, 32)));

TEST(SyncBubble, MultipleBatchesRepeatTheFlush)
{
    const int p = 8, m = 8, n = 5;
    const auto r = run("1f1b", p, m, n);
    EXPECT_EQ(r.report.makespan, static_cast<TimeNs>(n) * (m + p - 1) * 3 * kF);
    TimeNs flush = r.report.idleByCause[static_cast<std::size_t>(profiler::BubbleCause::Flush)];
    EXPECT_GT(flush, 0);
}

// ZB-H1 at F = I = W: bubble time (p − 1)(F + I − W) per stage per batch, about a third of
// 1F1B's (p − 1)(F + B), with 1F1B's in-flight micro-batches.
TEST(ZeroBubble, H1BubbleIsPMinusOneTimesFPlusIMinusW)
{
    for (int p : {2, 4, 8}) {
        for (int m : {p, 2 * p, 4 * p}) {
            const auto zb = run("zb-h1", p, m);
            const auto ofob = run("1f1b", p, m);
            for (const auto& st : zb.report.perStage) {
                EXPECT_EQ(st.idle, static_cast<TimeNs>(p - 1) * (kF + kF - kF)) << "p=" << p << " m=" << m;
                EXPECT_EQ(st.peakInflight, ofob.report.perStage[static_cast<std::size_t>(st.stage)].peakInflight);
            }
            EXPECT_EQ(3 * zb.report.totalIdle, ofob.report.totalIdle); // exactly a third at F = I = W
        }
    }
}

TEST(ZeroBubble, H2SteadyBubbleNearZeroWithAtMostTwiceTheActivations)
{
    const int p = 8, m = 16;
    const auto zb = run("zb-h2", p, m, 8);
    const auto ofob = run("1f1b", p, m, 8);
    EXPECT_LT(zb.report.steadyBubbleFraction, 0.01);
    EXPECT_LT(zb.report.bubbleFraction, 0.02);
    for (const auto& st : zb.report.perStage) {
        EXPECT_LE(st.peakInflight, 2 * ofob.report.perStage[static_cast<std::size_t>(st.stage)].peakInflight);
    }
}

// The zero-bubble authors' memory promise, counted as they count it: a micro-batch holds its
// activations from F until its W. ZB-H1 holds at most 1F1B's p, ZB-H2 at most 2p, however many
// micro-batches a batch has (before this was enforced, zb-h1 held 15 on stage 0 at p = 8 and
// zb-h2 held m, growing without bound like GPipe).
TEST(ZeroBubble, KeepTheirMemoryPromiseAtEveryM)
{
    const int p = 8;
    for (int m : {16, 24, 48}) {
        const auto h1 = run("zb-h1", p, m);
        const auto h2 = run("zb-h2", p, m);
        for (const auto& st : h1.report.perStage) {
            EXPECT_LE(st.peakMemoryBytes, p) << "zb-h1 m=" << m << " stage " << st.stage; // unit activations
            EXPECT_EQ(st.idle, static_cast<TimeNs>(p - 1) * kF) << "zb-h1 keeps its bubble, m=" << m;
        }
        for (const auto& st : h2.report.perStage) {
            EXPECT_LE(st.peakMemoryBytes, 2 * p) << "zb-h2 m=" << m << " stage " << st.stage;
        }
    }
    // The validator enforces the stated bound: one less is rejected.
    auto schedule = makeSchedule({.name = "zb-h1", .stages = p, .microbatches = 16, .batches = 1});
    ASSERT_TRUE(schedule);
    EXPECT_EQ(schedule->activationBound, std::vector<int>(p, p));
    schedule->activationBound[0] = p - 1;
    const Status tight = validate(*schedule);
    ASSERT_FALSE(tight);
    EXPECT_NE(tight.error().message.find("the stated memory bound is 7"), std::string::npos) << tight.error().message;
}

// The authors' bubble rate (cost − busy)/cost with cost the longest per-stage span, reported
// beside the global one. At F = I = W their formulas give ZB-H1 (p − 1)(F + I − W) per stage and
// ZB-H2 (p − 1)(F + I − 2W) = 0; 1F1B's stage 0 spans the whole run, so both rates agree there.
TEST(ZeroBubble, PerStageSpanBubbleIsTheAuthorsDefinition)
{
    for (int p : {4, 8}) {
        const int m = 3 * p;
        const auto h2 = run("zb-h2", p, m);
        EXPECT_EQ(h2.report.spanBubbleFraction, 0.0) << "p=" << p;
        EXPECT_GT(h2.report.bubbleFraction, 0.0); // the staggered start and end still idle globally
        const auto h1 = run("zb-h1", p, m);
        // cost = 3m + (p − 1) units on stage 0, busy 3m.
        EXPECT_DOUBLE_EQ(h1.report.spanBubbleFraction, 1.0 - 3.0 * m / (3.0 * m + p - 1)) << "p=" << p;
        const auto ofob = run("1f1b", p, m);
        EXPECT_DOUBLE_EQ(ofob.report.spanBubbleFraction, ofob.report.bubbleFraction);
        const auto zbv = run("zb-v", p, m);
        EXPECT_EQ(zbv.report.spanBubbleFraction, 0.0) << "p=" << p;
    }
}

} // namespace
} // namespace bs::runtime
