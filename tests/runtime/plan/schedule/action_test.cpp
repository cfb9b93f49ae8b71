#include "runtime/plan/schedule/action.h"

#include <gtest/gtest.h>

#include <vector>

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
    for (const Action& a :
        {forward(3, 12), backward(0, 1), backwardInput(5, 9), backwardWeight(7, 3), update(2, 1, 8, 15)}) {
        auto parsed = parseAction(toString(a));
        ASSERT_TRUE(parsed) << parsed.error().describe();
        EXPECT_EQ(*parsed, a);
    }
}

// DualPipeV's overlapped pair, in PyTorch's own spelling; its halves are plain F and B.
TEST(Action, OverlappedPairIsWrittenAndReadAsPyTorchDoes)
{
    const Action pair = overlapForwardBackward(1, 6, 6, 2);
    EXPECT_EQ(toString(pair), "(1F6;6B2)OVERLAP_F_B");
    auto parsed = parseAction("(1F6;6B2)OVERLAP_F_B");
    ASSERT_TRUE(parsed) << parsed.error().describe();
    EXPECT_EQ(*parsed, pair);
    EXPECT_EQ(pair.forwardHalf(), forward(1, 6));
    EXPECT_EQ(pair.backwardHalf(), backward(6, 2));
    std::vector<Action> parts;
    forEachPart(pair, [&](const Action& a) { parts.push_back(a); });
    EXPECT_EQ(parts, (std::vector<Action>{forward(1, 6), backward(6, 2)}));
    for (const char* bad :
        {"(1F6)OVERLAP_F_B", "(1F6;6I2)OVERLAP_F_B", "(1B6;6F2)OVERLAP_F_B", "((1F6;6B2)OVERLAP_F_B;0B1)OVERLAP_F_B"}) {
        auto rejected = parseAction(bad);
        ASSERT_FALSE(rejected) << bad;
        EXPECT_NE(rejected.error().message.find(bad), std::string::npos) << rejected.error().message;
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
             Case{"3X1", "unknown action letter 'X'"}, Case{"3F", "missing micro-batch"}, Case{"3F1x", "trailing text"},
             Case{"2U1", "':<first>-<last>'"}, Case{"2U1:9-3", "first <= last"}, Case{"-1F2", "missing stage"}}) {
        auto parsed = parseAction(c.text);
        ASSERT_FALSE(parsed) << c.text;
        EXPECT_NE(parsed.error().message.find(c.reason), std::string::npos) << c.text << ": " << parsed.error().message;
    }
}

} // namespace
} // namespace bs::runtime
