#include "bubblescope/paci/lag_bound.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bubblescope/paci/lr_schedule.h"

namespace {

struct LagCase
{
    int p, s, a, k, expected;
};

class MaxLagTest : public ::testing::TestWithParam<LagCase>
{};

TEST_P(MaxLagTest, MatchesCeilFormula)
{
    const LagCase c = GetParam();
    EXPECT_EQ(bs::paci::maxLag(c.p, c.s, c.a, c.k), c.expected);
}

INSTANTIATE_TEST_SUITE_P(Table, MaxLagTest,
    ::testing::Values(LagCase{8, 0, 8, 0, 1}, LagCase{8, 6, 8, 0, 1}, LagCase{8, 7, 8, 0, 0}, LagCase{8, 0, 7, 0, 1},
        LagCase{8, 0, 6, 0, 2}, LagCase{8, 0, 4, 0, 2}, LagCase{8, 3, 4, 0, 1}, LagCase{8, 0, 1, 0, 7},
        LagCase{4, 0, 4, 0, 1}, LagCase{4, 0, 4, 2, 2}, LagCase{1, 0, 1, 0, 0}, LagCase{8, 8, 8, 0, -1},
        LagCase{8, 0, 0, 0, -1}));

TEST(MinAccumForLag, IsTheSmallestWindowMeetingTheBound)
{
    for (int p = 1; p <= 12; ++p) {
        for (int k = 0; k <= 2; ++k) {
            for (int u = 1; u <= 4; ++u) {
                const int a = bs::paci::minAccumForLag(p, 0, u, k);
                ASSERT_GE(a, 1);
                EXPECT_LE(bs::paci::maxLag(p, 0, a, k), u) << "p=" << p << " k=" << k << " u=" << u;
                if (a > 1) {
                    EXPECT_GT(bs::paci::maxLag(p, 0, a - 1, k), u) << "p=" << p << " k=" << k << " u=" << u;
                }
            }
        }
    }
    EXPECT_EQ(bs::paci::minAccumForLag(8, 0, 1), 7);
    EXPECT_EQ(bs::paci::minAccumForLag(8, 0, 0), -1);
    EXPECT_EQ(bs::paci::minAccumForLag(8, 7, 0), 1);
}

TEST(LrSchedule, WarmsUpLinearlyThenDecaysByCosineToTheFloor)
{
    const bs::paci::LrSchedule s{1.0, 4, 14, 0.1};
    EXPECT_DOUBLE_EQ(s.lrAt(0), 0.25);
    EXPECT_DOUBLE_EQ(s.lrAt(3), 1.0);
    EXPECT_DOUBLE_EQ(s.lrAt(4), 1.0);
    EXPECT_NEAR(s.lrAt(9), 0.1 + 0.9 * 0.5, 1e-12); // halfway through the decay
    EXPECT_DOUBLE_EQ(s.lrAt(14), 0.1);
    EXPECT_DOUBLE_EQ(s.lrAt(100), 0.1);
    const bs::paci::LrSchedule constant{0.5, 0, 0, 0.1};
    EXPECT_DOUBLE_EQ(constant.lrAt(0), 0.5);
    EXPECT_DOUBLE_EQ(constant.lrAt(1000), 0.5);
}

TEST(LrSchedule, OffsetShiftsTheUpdateCount)
{
    // A run that switched to twice the updates per batch after 3 batches: the new schedule in the
    // new units (warm-up 8, total 28) continues at update 6 although only 3 were applied.
    const bs::paci::LrSchedule before{1.0, 4, 14, 0.1};
    const bs::paci::LrSchedule after{1.0, 8, 28, 0.1, 6 - 3};
    EXPECT_DOUBLE_EQ(after.lrAt(3), (bs::paci::LrSchedule{1.0, 8, 28, 0.1}.lrAt(6)));
    EXPECT_NEAR(after.lrAt(3 + 2 * 6), before.lrAt(3 + 6), 1e-12); // 6 batches later on both clocks
    EXPECT_DOUBLE_EQ((bs::paci::LrSchedule{1.0, 4, 14, 0.1, -10}.lrAt(2)), 0.25); // clamped at 0
}

} // namespace
