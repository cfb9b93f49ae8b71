#include "profiler/io/event_name.h"

#include <gtest/gtest.h>

namespace bs::profiler {
namespace {

TEST(EventName, WritesPyTorchStyleNames)
{
    TraceEvent e;
    e.stage = 0;
    e.kind = EventKind::Forward;
    e.microbatch = 3;
    EXPECT_EQ(eventName(e), "PP:0F3");
    e.stage = 2;
    e.kind = EventKind::Update;
    e.microbatch = 1;
    EXPECT_EQ(eventName(e), "PP:2U1");
    e.kind = EventKind::Marker;
    e.microbatch = -1;
    EXPECT_EQ(eventName(e), "PP:2M-1");
}

TEST(EventName, ParsesEveryKindBack)
{
    for (int k = 0; k < kEventKindCount; ++k) {
        TraceEvent e;
        e.stage = 17;
        e.kind = static_cast<EventKind>(k);
        e.microbatch = 123;
        const auto parsed = parseEventName(eventName(e));
        ASSERT_TRUE(parsed) << eventName(e);
        EXPECT_EQ(parsed->stage, 17);
        EXPECT_EQ(parsed->kind, e.kind);
        EXPECT_EQ(parsed->microbatch, 123);
    }
}

TEST(EventName, RejectsOtherNames)
{
    for (const char* name : {"", "PP:", "PP:0", "PP:0F", "PP:F3", "PP:0X3", "PP:0F3x", "pp:0F3", "aten::mm",
             "PP:99999999F1", "PP:-1F2", "PP:0F 3"}) {
        EXPECT_FALSE(parseEventName(name)) << name;
    }
}

} // namespace
} // namespace bs::profiler
