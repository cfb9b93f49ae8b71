#include "profiler/io/micros.h"

#include <gtest/gtest.h>

#include <limits>

namespace bs::profiler {
namespace {

TEST(Micros, WriterFormIsExactAtAnyMagnitude)
{
    EXPECT_EQ(microsTextToNs("1.500"), 1500);
    EXPECT_EQ(microsTextToNs("-0.007"), -7);
    EXPECT_EQ(microsTextToNs("0.000"), 0);
    EXPECT_EQ(microsTextToNs("12"), 12000);
    EXPECT_EQ(microsTextToNs("1.5"), 1500);
    EXPECT_EQ(microsTextToNs("1.05"), 1050);
    // Beyond 2^53 ns a double cannot hold every ns; the text path still is exact.
    EXPECT_EQ(microsTextToNs("8999999999999999.999"), 8'999'999'999'999'999'999);
    EXPECT_EQ(microsTextToNs("9007199254740.993"), 9'007'199'254'740'993);
}

TEST(Micros, OtherNumberFormsAreRounded)
{
    EXPECT_EQ(microsTextToNs("1.0004"), 1000);
    EXPECT_EQ(microsTextToNs("1.0006"), 1001);
    EXPECT_EQ(microsTextToNs("2.5e3"), 2'500'000);
    EXPECT_EQ(microsTextToNs("-1E-3"), -1);
}

TEST(Micros, RejectsNonNumbersAndOutOfRange)
{
    for (const char* text : {"", "-", "abc", "1.2.3", "9300000000000000", "1e300", "nan", "inf"}) {
        EXPECT_FALSE(microsTextToNs(text)) << text;
    }
}

} // namespace
} // namespace bs::profiler
