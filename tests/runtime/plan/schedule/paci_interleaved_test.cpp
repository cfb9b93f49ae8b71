// PACI on an interleaved (loop) placement: generated for many (p, v, m, a, N), the validator proves
// the stated per-chunk version-lag bound ⌈D_s / a⌉ (catalogue.h paciInterleavedLagBound), the
// bound is what a replay of the rank programs measures (tight for the stages the window reaches),
// and an understated bound is refused naming the micro-batch and the stage.
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/validate.h"

#include <gtest/gtest.h>

#include <map>

namespace bs::runtime {
namespace {

// The most updates of each stage a micro-batch crosses between its forward and its backward, by
// replaying each rank's program in order (what every executor does).
std::vector<int> measuredLag(const Schedule& schedule)
{
    std::vector<int> most(static_cast<std::size_t>(schedule.stages()), 0);
    for (const auto& program : schedule.programs) {
        std::map<int, int> updates;
        std::map<std::pair<int, int>, int> atForward;
        for (const Action& a : program) {
            if (a.kind == ActionKind::Update) {
                ++updates[a.stage];
            } else if (a.kind == ActionKind::Forward) {
                atForward[{a.stage, a.microbatch}] = updates[a.stage];
            } else if (a.isBackwardLike()) {
                auto& m = most[static_cast<std::size_t>(a.stage)];
                m = std::max(m, updates[a.stage] - atForward[{a.stage, a.microbatch}]);
            }
        }
    }
    return most;
}

ScheduleParams params(int p, int v, int m, int a, int n)
{
    return {.name = "paci-interleaved", .stages = p, .microbatches = m, .accum = a, .batches = n, .stagesPerRank = v};
}

TEST(PaciInterleaved, ValidatorProvesTheLagBoundForManyShapes)
{
    int checked = 0;
    for (int p : {1, 2, 3, 4, 8}) {
        for (int v : {2, 3, 4}) {
            for (int m : {p, 2 * p, 4 * p}) {
                for (int a : {1, 2, 4, m}) {
                    if (m % a != 0) {
                        continue;
                    }
                    for (int n : {1, 3}) {
                        auto schedule = makeSchedule(params(p, v, m, a, n));
                        ASSERT_TRUE(schedule)
                            << p << " " << v << " " << m << " " << a << ": " << schedule.error().describe();
                        ASSERT_EQ(schedule->lagBound.size(), static_cast<std::size_t>(p * v));
                        EXPECT_TRUE(schedule->asynchronous);
                        EXPECT_EQ(schedule->weights, WeightPolicy::InPlace);
                        const std::vector<int> lag = measuredLag(*schedule);
                        for (int s = 0; s < p * v; ++s) {
                            EXPECT_LE(lag[static_cast<std::size_t>(s)], schedule->lagBound[static_cast<std::size_t>(s)])
                                << "p " << p << " v " << v << " m " << m << " a " << a << " stage " << s;
                            EXPECT_EQ(
                                schedule->lagBound[static_cast<std::size_t>(s)], paciInterleavedLagBound(p, v, s, a));
                        }
                        ++checked;
                    }
                }
            }
        }
    }
    EXPECT_GT(checked, 150);
}

// The bound is tight: a long stream reaches it on every stage. With a = 1 every backward is
// followed by an update, so the lag is the number of backwards in between, D_s; with a > 1 it is
// at most ⌈D_s / a⌉.
TEST(PaciInterleaved, BoundIsReachedOnEveryStageOfALongStream)
{
    for (int p : {2, 3, 4}) {
        for (int v : {2, 3}) {
            for (int a : {1, 2, p, 2 * p}) {
                auto schedule = makeSchedule(params(p, v, 2 * p, a, 6));
                ASSERT_TRUE(schedule) << schedule.error().describe();
                const std::vector<int> lag = measuredLag(*schedule);
                for (int s = 0; s < p * v; ++s) {
                    const int d = paciInterleavedBackwardsBetween(p, v, s);
                    EXPECT_EQ(lag[static_cast<std::size_t>(s)], paciInterleavedLagBound(p, v, s, a))
                        << "p " << p << " v " << v << " a " << a << " stage " << s;
                    EXPECT_LE(paciInterleavedLagBound(p, v, s, a), (d + a - 1) / a);
                    if (a == 1) {
                        EXPECT_EQ(paciInterleavedLagBound(p, v, s, a), d);
                    }
                }
            }
        }
    }
}

// D_s by hand for p = 2, v = 2 (S = 4): rank 0's backward steps run stages 2, 2, 0, 0, 2, 2, ...;
// stage 0 sees L = 6 steps between a micro-batch's forward and backward, 3 of them its own.
// The last stage (L = 0) never waits and the bound falls with the stage, but it is not plain
// PACI's S − 1 − s over the same S stages: a middle chunk waits for its rank's other chunks too
// (p = 8, v = 2, stage 3: 15 backwards in between, where one-stage-per-rank PACI at S = 16 has 12).
TEST(PaciInterleaved, DepthByHandAndAgainstPlainPaci)
{
    EXPECT_EQ(paciInterleavedBackwardsBetween(2, 2, 0), 3);
    EXPECT_EQ(paciInterleavedBackwardsBetween(2, 2, 1), 2);
    EXPECT_EQ(paciInterleavedBackwardsBetween(2, 2, 2), 1);
    EXPECT_EQ(paciInterleavedBackwardsBetween(2, 2, 3), 0);
    EXPECT_EQ(paciInterleavedLagBound(2, 2, 0, 1), 3);
    EXPECT_EQ(paciInterleavedLagBound(2, 2, 0, 2), 1); // D = 2 at even, 3 at odd micro-batches: never 2 updates
    EXPECT_EQ(paciInterleavedBackwardsBetween(8, 2, 3), 15);
    for (int p : {2, 4, 8}) {
        for (int v : {2, 3, 4}) {
            const int total = p * v;
            for (int s = 0; s + 1 < total; ++s) {
                EXPECT_LE(paciInterleavedBackwardsBetween(p, v, s + 1), paciInterleavedBackwardsBetween(p, v, s));
                EXPECT_LE(paciInterleavedBackwardsBetween(p, v, s), 2 * (total - 1 - s)) << p << " " << v << " " << s;
            }
        }
    }
}

TEST(PaciInterleaved, AnUnderstatedBoundIsRefusedNamingStageAndMicrobatch)
{
    auto schedule = makeSchedule(params(4, 2, 8, 1, 2));
    ASSERT_TRUE(schedule);
    Schedule bad = *schedule;
    bad.lagBound[0] -= 1;
    const Status status = validate(bad);
    ASSERT_FALSE(status);
    EXPECT_NE(status.error().message.find("updates of stage 0"), std::string::npos) << status.error().message;
    EXPECT_NE(status.error().message.find("stated lag bound is " + std::to_string(bad.lagBound[0])), std::string::npos);
}

// Its traits: asynchronous, windowed, on a loop placement, m a multiple of p, no extra depth.
TEST(PaciInterleaved, TraitsAndLimits)
{
    const ScheduleInfo* info = findSchedule("paci-interleaved");
    ASSERT_NE(info, nullptr);
    EXPECT_TRUE(info->asynchronous);
    EXPECT_TRUE(info->takesAccumWindow());
    EXPECT_TRUE(info->multiStage());
    EXPECT_EQ(info->placement, Placement::Loop);
    EXPECT_TRUE(info->fixedDepth);
    ScheduleParams deeper = params(4, 2, 8, 2, 1);
    deeper.extraDepth = 1;
    auto refused = makeSchedule(deeper);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("extra-depth"), std::string::npos);
    auto uneven = makeSchedule(params(4, 2, 6, 2, 1));
    ASSERT_FALSE(uneven);
    EXPECT_NE(uneven.error().message.find("microbatches"), std::string::npos);
    // No flush: one warm-up for the whole run, so N batches take fewer actions' worth of idle than N flushes.
    auto one = makeSchedule(params(4, 2, 8, 8, 3));
    ASSERT_TRUE(one);
    EXPECT_EQ(one->stages(), 8);
}

// Plain PACI now states its bound in the schedule too, and the validator proves it (extra depth
// and a runtime order planned with comm time included).
TEST(PaciInterleaved, PlainPaciCarriesItsBoundIntoTheValidator)
{
    for (int k : {0, 1, 3}) {
        ScheduleParams p{.name = "paci",
            .stages = 4,
            .microbatches = 8,
            .accum = 2,
            .batches = 3,
            .extraDepth = k,
            .commRatio = 0.5};
        auto schedule = makeSchedule(p);
        ASSERT_TRUE(schedule) << schedule.error().describe();
        ASSERT_EQ(schedule->lagBound.size(), 4u);
        const std::vector<int> lag = measuredLag(*schedule);
        for (int s = 0; s < 4; ++s) {
            EXPECT_LE(lag[static_cast<std::size_t>(s)], schedule->lagBound[static_cast<std::size_t>(s)]);
            EXPECT_EQ(schedule->lagBound[static_cast<std::size_t>(s)], paciLagBound(4, s, 2, k));
        }
    }
}

} // namespace
} // namespace bs::runtime
