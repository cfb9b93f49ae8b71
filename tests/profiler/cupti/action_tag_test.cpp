#include "profiler/cupti/action_tag.h"

#include <gtest/gtest.h>

using namespace bs::profiler;
using namespace bs::profiler::cupti;

TEST(ActionTag, RoundTripsEveryFieldIncludingLimits)
{
    for (const ActionTag tag : {ActionTag{0, EventKind::Forward, -1, 0}, ActionTag{7, EventKind::BackwardWeight, 123456, 42},
                                ActionTag{kMaxStage, EventKind::Marker, kMaxMicrobatch, kMaxVersion},
                                ActionTag{3, EventKind::Send, 9, 4}}) {
        const auto id = packTag(tag);
        ASSERT_TRUE(id.has_value());
        const auto back = unpackTag(*id);
        ASSERT_TRUE(back.has_value());
        EXPECT_EQ(*back, tag);
    }
}

TEST(ActionTag, DistinctTagsGetDistinctIds)
{
    const auto a = packTag({1, EventKind::Forward, 2, 3});
    const auto b = packTag({1, EventKind::Backward, 2, 3});
    const auto c = packTag({1, EventKind::Forward, 3, 3});
    const auto d = packTag({2, EventKind::Forward, 2, 3});
    EXPECT_NE(*a, *b);
    EXPECT_NE(*a, *c);
    EXPECT_NE(*a, *d);
}

TEST(ActionTag, RejectsOutOfRangeFields)
{
    EXPECT_FALSE(packTag({kMaxStage + 1, EventKind::Forward, 0, 0}));
    EXPECT_FALSE(packTag({-1, EventKind::Forward, 0, 0}));
    EXPECT_FALSE(packTag({0, EventKind::Forward, -2, 0}));
    EXPECT_FALSE(packTag({0, EventKind::Forward, kMaxMicrobatch + 1, 0}));
    EXPECT_FALSE(packTag({0, EventKind::Forward, 0, kMaxVersion + 1}));
    EXPECT_FALSE(packTag({0, EventKind::Forward, 0, -1}));
}

TEST(ActionTag, ForeignIdWithUnknownKindIsRejected)
{
    EXPECT_FALSE(unpackTag(std::uint64_t{0xF} << 48));
}
