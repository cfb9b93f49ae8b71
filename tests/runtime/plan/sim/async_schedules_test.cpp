// Asynchronous schedules: PACI's utilisation and drift bound, PipeDream's stashed versions,
// 2BW's two versions, the naive async 1F1B's unbounded lag.

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/simulator.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

constexpr TimeNs kF = 1000;

SimulationResult run(const std::string& name, int p, int m, int n, int accum = 0, int extraDepth = 0, TimeNs comm = 0)
{
    SimulationRequest request{
        {.name = name, .stages = p, .microbatches = m, .accum = accum, .batches = n, .extraDepth = extraDepth},
        CostModel::uniform(p, kF, kF, kF, 0, comm), 1};
    auto result = simulate(request);
    EXPECT_TRUE(result) << result.error().describe();
    return std::move(*result);
}

// Micro-batch i at stage s crosses the updates that follow backwards i−d+1 .. i−1 (d = p − s + k):
// one after backward j whenever (j + 1) is a multiple of a. Computed here from that closed form,
// independently of the generator.
std::map<int, int> closedFormLagHistogram(int p, int s, int a, int k, int total)
{
    const int d = std::min(p - s + k, total);
    std::map<int, int> hist;
    for (int i = 0; i < total; ++i) {
        int lag = 0;
        for (int j = std::max(0, i - d + 1); j <= i - 1; ++j) {
            lag += (j + 1) % a == 0 ? 1 : 0;
        }
        ++hist[lag];
    }
    return hist;
}

TEST(Paci, SteadyUtilizationAtLeast99PercentForTwentyBatches)
{
    for (int a : {4, 8, 16}) {
        const auto r = run("paci", 8, a, 20, a);
        EXPECT_GE(1.0 - r.report.steadyBubbleFraction, 0.99) << "a=" << a;
    }
}

TEST(Paci, MaxLagIsExactlyTheBoundAndHistogramMatchesClosedForm)
{
    const int p = 8;
    for (int a : {1, 2, 4, 8, 16}) {
        for (int k : {0}) {
            const int m = std::max(a, 8);
            const auto r = run("paci", p, m, 4, a, k);
            for (const auto& st : r.report.perStage) {
                EXPECT_EQ(st.maxVersionLag, paciLagBound(p, st.stage, a, k))
                    << "a=" << a << " k=" << k << " s=" << st.stage;
                EXPECT_EQ(st.versionLagHistogram, closedFormLagHistogram(p, st.stage, a, k, m * 4))
                    << "a=" << a << " k=" << k << " s=" << st.stage;
                EXPECT_EQ(st.peakInflight, std::min(p - st.stage + k, m * 4));
                EXPECT_EQ(st.peakWeightVersions, 1);
            }
        }
    }
}

TEST(Paci, ExtraDepthStaysWithinTheBound)
{
    // With k > 0 the runtime's rule orders the actions; the bound ⌈(p − s − 1 + k)/a⌉ still holds.
    const int p = 8;
    for (int a : {2, 8}) {
        for (int k : {1, 3}) {
            SimulationRequest request{
                {.name = "paci", .stages = p, .microbatches = 8, .accum = a, .batches = 6, .extraDepth = k},
                CostModel::uniform(p, kF, kF, kF, 0, kF / 5), 1};
            auto r = simulate(request);
            ASSERT_TRUE(r) << r.error().describe();
            for (const auto& st : r->report.perStage) {
                EXPECT_LE(st.maxVersionLag, paciLagBound(p, st.stage, a, k));
                EXPECT_LE(st.peakInflight, p - st.stage + k);
            }
            EXPECT_EQ(r->report.perStage[0].maxVersionLag, paciLagBound(p, 0, a, k)) << "a=" << a << " k=" << k;
        }
    }
}

TEST(Paci, ShareAtMaxLagMatchesPaperTableInSteadyState)
{
    // paci.md §2.4, a = 8, p = 8: stage 0 crosses one update for 7/8 of micro-batches, stage 6 for 1/8.
    const auto hist = closedFormLagHistogram(8, 0, 8, 0, 8000);
    EXPECT_NEAR(static_cast<double>(hist.at(1)) / 8000.0, 7.0 / 8.0, 1e-3);
    const auto r = run("paci", 8, 8, 100, 8);
    const auto& s6 = r.report.perStage[6].versionLagHistogram;
    EXPECT_NEAR(static_cast<double>(s6.at(1)) / 800.0, 1.0 / 8.0, 1e-2);
}

TEST(Paci, BoundHelper)
{
    EXPECT_EQ(paciLagBound(8, 0, 8), 1);
    EXPECT_EQ(paciLagBound(8, 0, 4), 2);
    EXPECT_EQ(paciLagBound(8, 2, 4), 2);
    EXPECT_EQ(paciLagBound(8, 3, 4), 1);
    EXPECT_EQ(paciLagBound(8, 7, 1), 0);
    EXPECT_EQ(paciLagBound(8, 0, 1), 7);
    EXPECT_EQ(paciLagBound(8, 0, 8, 2), 2);
}

TEST(Async, PipeDreamStashesUpToPMinusSVersions)
{
    const int p = 8;
    const auto r = run("pipedream", p, 8, 4);
    for (const auto& st : r.report.perStage) {
        EXPECT_EQ(st.peakWeightVersions, p - st.stage) << "stage " << st.stage;
        EXPECT_EQ(st.maxVersionLag, p - st.stage - 1);
    }
}

TEST(Async, TwoBwHoldsTwoVersions)
{
    const auto r = run("2bw", 8, 8, 4);
    for (const auto& st : r.report.perStage) {
        EXPECT_EQ(st.peakWeightVersions, st.stage == 7 ? 1 : 2) << "stage " << st.stage;
        EXPECT_LE(st.maxVersionLag, 1);
    }
}

TEST(Async, NaiveAsyncLagGrowsWithDepth)
{
    const int p = 8;
    const auto r = run("async-1f1b", p, 8, 4);
    for (const auto& st : r.report.perStage) {
        EXPECT_EQ(st.maxVersionLag, p - st.stage - 1);
        EXPECT_EQ(st.peakWeightVersions, 1);
    }
}

TEST(Async, ExtraDepthRecoversUtilizationLostToComm)
{
    // With comm = 0.1·F the p − s window alone caps steady utilisation near 94 % (paci.md §2.4's
    // independent simulation); k > 0 trades activation memory for it.
    const auto k0 = run("paci", 8, 8, 20, 8, 0, kF / 10);
    const auto k4 = run("paci", 8, 8, 20, 8, 4, kF / 10);
    const auto k8 = run("paci", 8, 8, 20, 8, 8, kF / 10);
    EXPECT_NEAR(1.0 - k0.report.steadyBubbleFraction, 0.945, 0.005);
    EXPECT_GT(1.0 - k4.report.steadyBubbleFraction, 0.98);
    EXPECT_GT(1.0 - k8.report.steadyBubbleFraction, 0.99);
    EXPECT_GT(k4.report.perStage[0].peakInflight, k0.report.perStage[0].peakInflight);
}

} // namespace
} // namespace bs::runtime
