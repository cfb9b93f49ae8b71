#include "runtime/schedule/action.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

TEST(Action, TextFormMatchesPyTorch)
{
    EXPECT_EQ(toString(forward(3, 12)), "3F12");
    EXPECT_EQ(toString(backwardInput(0, 4)), "0I4");
    EXPECT_EQ(toString(backwardWeight(7, 3)), "7W3");
    EXPECT_EQ(toString(backward(1, 0)), "1B0");
    EXPECT_EQ(toString(update(2, 1, 8, 15)), "2U1:8-15");
}

TEST(Action, ParseRoundTripsEveryKind)
{
    for (const Action& a : {forward(3, 12), backward(0, 1), backwardInput(5, 9), backwardWeight(7, 3), update(2, 1, 8, 15)}) {
        auto parsed = parseAction(toString(a));
        ASSERT_TRUE(parsed) << parsed.error().describe();
        EXPECT_EQ(*parsed, a);
    }
}

TEST(Action, ParseRejectsMalformedTextWithReason)
{
    struct Case
    {
        const char* text;
        const char* reason;
    };
    for (const Case& c : {Case{"", "missing stage"}, Case{"F3", "missing stage"}, Case{"3", "missing action letter"},
                          Case{"3X1", "unknown action letter 'X'"}, Case{"3F", "missing micro-batch"},
                          Case{"3F1x", "trailing text"}, Case{"2U1", "':<first>-<last>'"},
                          Case{"2U1:9-3", "first <= last"}, Case{"-1F2", "missing stage"}}) {
        auto parsed = parseAction(c.text);
        ASSERT_FALSE(parsed) << c.text;
        EXPECT_NE(parsed.error().message.find(c.reason), std::string::npos) << c.text << ": " << parsed.error().message;
    }
}

} // namespace
} // namespace bs::runtime
