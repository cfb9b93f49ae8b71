#pragma once
// One assertion for "the same analysis": every figure (the report's JSON) and every idle span,
// field for field. For tests that take one trace's analysis two ways (split walks, a first walk
// taken as the trace was written, the copies of a repeating trace taken in one step).

#include "profiler/analysis/report.h"
#include "profiler/analysis/report_json.h"

#include <gtest/gtest.h>

namespace bs::profiler::test {

inline void expectSameReport(const Report& a, const Report& b)
{
    EXPECT_EQ(toJson(a).dump(), toJson(b).dump());
    ASSERT_EQ(a.bubbles.size(), b.bubbles.size());
    for (std::size_t i = 0; i < a.bubbles.size(); ++i) {
        const BubbleSpan& x = a.bubbles[i];
        const BubbleSpan& y = b.bubbles[i];
        ASSERT_TRUE(x.start == y.start && x.end == y.end && x.stage == y.stage && x.cause == y.cause)
            << "span " << i << ": [" << x.start << ", " << x.end << ") on " << x.stage << " vs [" << y.start << ", "
            << y.end << ") on " << y.stage;
    }
}

} // namespace bs::profiler::test
