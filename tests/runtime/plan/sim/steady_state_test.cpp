// simulate() with figuresOnly extends a long run's figures from three short runs
// (steady_state.h). The oracle is the plain simulation of all N batches: the report (every
// figure, every idle span) and the throughput must be the same, for every schedule, placement,
// weight policy and cost model, whether the steady state was taken or the check sent it back to
// the plain drive.

#include "runtime/plan/sim/steady_state.h"

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/simulator.h"

#include <gtest/gtest.h>

#include <string>

namespace bs::runtime {
namespace {

CostModel costsOf(int kind, int p)
{
    if (kind == 0) {
        return CostModel::uniform(p, 1'000'000, 1'000'000, 1'000'000, 0, 100'000);
    }
    CostModel costs = CostModel::uniform(p, 1000, 2000, 700, 300, 0);
    for (int s = 0; s < p; ++s) { // uneven stages, comm by bytes, memory in bytes, recompute
        StageCost& c = costs.stages[static_cast<std::size_t>(s)];
        c.forward = 900 + 137 * s;
        c.backwardInput = 1500 + 71 * ((s * 5) % p);
        c.backwardWeight = 500 + 33 * s;
        c.update = 250;
        c.activationBytes = 1000 + s;
        c.sendBytes = 4096;
        c.paramBytes = 77777 + s;
        c.recomputeBytes = kind == 2 ? 5 : 0;
        c.forwardBackward = kind == 2 ? 2000 + 11 * s : 0;
    }
    costs.commLatency = 123;
    costs.commBytesPerSecond = kind == 2 ? 1e9 : 0;
    costs.bytesKnown = kind == 2;
    return costs;
}

TEST(SteadyState, FiguresAreThoseOfThePlainRunOfAllBatches)
{
    int extended = 0, plain = 0;
    for (const auto& info : scheduleCatalogue()) {
        for (const int p : {2, 4, 8}) {
            for (const int m : {1, 4, 16}) {
                for (const int kind : {0, 1, 2}) {
                    for (const int n : {7, 23}) {
                        ScheduleParams params{.name = info.name, .stages = p, .microbatches = m, .batches = n};
                        params.accum = info.takesAccumWindow() && m % 2 == 0 && kind == 1 ? m / 2 : 0;
                        params.extraDepth = info.asynchronous && !info.fixedDepth && kind == 2 ? 1 : 0;
                        SimulationRequest request{params, costsOf(kind, p), 2};
                        auto whole = simulate(request);
                        request.figuresOnly = true;
                        auto figures = simulate(request);
                        SCOPED_TRACE(info.name + " p" + std::to_string(p) + " m" + std::to_string(m) + " cost"
                            + std::to_string(kind) + " n" + std::to_string(n));
                        ASSERT_EQ(bool(whole), bool(figures));
                        if (!whole) {
                            EXPECT_EQ(whole.error().message, figures.error().message);
                            continue;
                        }
                        const bool extendedHere = figures->trace->size() < whole->trace->size();
                        if (extendedHere) {
                            EXPECT_TRUE(figures->report.bubbles.empty()); // only a timeline reads them
                            whole->report.bubbles.clear();
                        }
                        EXPECT_TRUE(sameReport(whole->report, figures->report));
                        EXPECT_EQ(whole->throughputSamplesPerSecond, figures->throughputSamplesPerSecond);
                        EXPECT_EQ(figures->schedule.params.batches, n);
                        (extendedHere ? extended : plain) += 1;
                    }
                }
            }
        }
    }
    // Most settle within the short runs; the rest were driven plainly, with the same figures.
    EXPECT_GT(extended, 4 * plain);
}

// The benchmark's and the CLI's long runs (p = 8, m = 16): every schedule settles.
TEST(SteadyState, EveryScheduleSettlesAtTheBenchmarkShape)
{
    for (const auto& info : scheduleCatalogue()) {
        SCOPED_TRACE(info.name);
        SimulationRequest request{{.name = info.name, .stages = 8, .microbatches = 16, .batches = 60},
            CostModel::uniform(8, 1'000'000, 1'000'000, 1'000'000, 0, 100'000), 1};
        auto whole = simulate(request);
        request.figuresOnly = true;
        auto figures = simulate(request);
        ASSERT_TRUE(whole && figures);
        EXPECT_LT(figures->trace->size(), whole->trace->size() / 5); // the short run's: extended
        const int settle = figures->settledAtBatches;
        ASSERT_GE(settle, kSettleBatches);
        // The spans too, extended from the plain runs of K + 1 and K + 2 batches.
        request.figuresOnly = false;
        request.schedule.batches = settle + 1;
        auto shorter = simulate(request);
        request.schedule.batches = settle + 2;
        auto longer = simulate(request);
        ASSERT_TRUE(shorter && longer);
        EXPECT_EQ(figures->steadyBatchPeriodNs, longer->report.makespan - shorter->report.makespan);
        const auto extended = extendReport(shorter->report, longer->report, 60 - settle - 2);
        ASSERT_TRUE(extended);
        EXPECT_TRUE(sameReport(whole->report, *extended));
        whole->report.bubbles.clear();
        EXPECT_TRUE(sameReport(whole->report, figures->report));
    }
}

// The check is on outputs: reports that do not differ by one repeated batch are not extended.
TEST(SteadyState, ReportsThatDoNotRepeatAreNotExtended)
{
    SimulationRequest request{{.name = "1f1b", .stages = 4, .microbatches = 4, .batches = 5},
        CostModel::uniform(4, 1000, 1000, 1000, 0, 0), 1};
    auto five = simulate(request);
    request.schedule.batches = 6;
    auto six = simulate(request);
    ASSERT_TRUE(five && six);
    auto seven = extendReport(five->report, six->report, 1);
    ASSERT_TRUE(seven);
    request.schedule.batches = 7;
    auto plainSeven = simulate(request);
    ASSERT_TRUE(plainSeven);
    EXPECT_TRUE(sameReport(*seven, plainSeven->report));
    EXPECT_FALSE(extendReport(six->report, five->report, 1)); // shorter the wrong way round
    profiler::Report moved = six->report;
    moved.bubbles.pop_back(); // a stage with fewer spans than the shorter run's
    moved.bubbles.pop_back();
    moved.bubbles.pop_back();
    EXPECT_FALSE(extendReport(five->report, moved, 1));
    EXPECT_FALSE(sameReport(six->report, moved));
}

} // namespace
} // namespace bs::runtime
