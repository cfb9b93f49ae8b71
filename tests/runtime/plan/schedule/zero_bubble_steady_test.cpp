// ZB-H2's list scheduler copies the batches after its state repeats a batch on instead of
// scheduling them (generators_zero_bubble.cpp, SteadyState): the programs must be the ones it
// schedules action by action, for every shape, including those whose last batches stop the copy
// early (the last micro-batch bounds the forwards) and those too short to copy at all.
#include "runtime/plan/schedule/generators.h"
#include "runtime/plan/schedule/validate.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace bs::runtime::detail {
namespace {

TEST(ZeroBubbleSteadyState, CopiedBatchesAreTheScheduledOnes)
{
    int copiedShapes = 0;
    for (int p : {2, 3, 4, 5, 8}) {
        for (int m : {1, 2, 3, 4, 7, 8, 16}) {
            for (int n : {1, 3, 4, 5, 6, 9, 40}) {
                SCOPED_TRACE(::testing::Message() << "p=" << p << " m=" << m << " N=" << n);
                const ScheduleParams params{.name = "zb-h2", .stages = p, .microbatches = m, .accum = 0, .batches = n};
                int batchesCopied = 0;
                const Schedule copied = makeZeroBubble(params, true, true, &batchesCopied);
                const Schedule scheduled = makeZeroBubble(params, true, false);
                ASSERT_EQ(copied.programs.size(), scheduled.programs.size());
                for (std::size_t s = 0; s < copied.programs.size(); ++s) {
                    ASSERT_EQ(copied.programs[s].size(), scheduled.programs[s].size()) << "stage " << s;
                    for (std::size_t i = 0; i < copied.programs[s].size(); ++i) {
                        ASSERT_EQ(copied.programs[s][i], scheduled.programs[s][i])
                            << "stage " << s << ", step " << i << ": " << toString(copied.programs[s][i]) << " vs "
                            << toString(scheduled.programs[s][i]);
                    }
                }
                ASSERT_TRUE(validate(copied)) << validate(copied).error().describe();
                EXPECT_LE(batchesCopied, std::max(0, n - 2));
                copiedShapes += batchesCopied > 0 ? 1 : 0;
            }
        }
    }
    // Most shapes with N >= 5 reach their steady state within the four marks.
    EXPECT_GE(copiedShapes, 5 * 7 * 3);
}

} // namespace
} // namespace bs::runtime::detail
