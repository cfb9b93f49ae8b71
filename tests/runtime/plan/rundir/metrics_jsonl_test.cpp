#include "runtime/plan/rundir/run_dir_reader.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

TEST(MetricsJsonl, ParsesOneObjectPerLineSkippingBlankLines)
{
    Result<MetricsLog> log = parseMetricsJsonl("{\"step\":0}\n\n{\"step\":1,\"loss\":2.5}\n");
    ASSERT_TRUE(log) << log.error().describe();
    ASSERT_EQ(log->records.size(), 2u);
    EXPECT_EQ(log->records[1]["loss"], 2.5);
    EXPECT_TRUE(log->warnings.empty());
}

TEST(MetricsJsonl, CompleteLastLineWithoutNewlineIsKept)
{
    Result<MetricsLog> log = parseMetricsJsonl("{\"step\":0}\n{\"step\":1}");
    ASSERT_TRUE(log);
    EXPECT_EQ(log->records.size(), 2u);
    EXPECT_TRUE(log->warnings.empty());
}

TEST(MetricsJsonl, TruncatedLastLineIsIgnoredWithAWarning)
{
    Result<MetricsLog> log = parseMetricsJsonl("{\"step\":0}\n{\"step\":1}\n{\"step\":2,\"lo", "m.jsonl");
    ASSERT_TRUE(log) << log.error().describe();
    EXPECT_EQ(log->records.size(), 2u);
    ASSERT_EQ(log->warnings.size(), 1u);
    EXPECT_EQ(log->warnings[0], "m.jsonl:3: incomplete last record ignored (the run stopped while writing it)");
}

TEST(MetricsJsonl, CorruptLineInTheMiddleNamesItsLine)
{
    Result<MetricsLog> log = parseMetricsJsonl("{\"step\":0}\n{\"step\":1\n{\"step\":2}\n", "m.jsonl");
    ASSERT_FALSE(log);
    EXPECT_EQ(log.error().code, ErrorCode::ParseError);
    EXPECT_EQ(log.error().context, "m.jsonl:2");
    EXPECT_EQ(log.error().message, "metrics record is not valid JSON");
}

TEST(MetricsJsonl, CorruptLastLineWithItsNewlineIsAnError)
{
    // A newline after it means the line was written completely: the damage is not a crash's.
    Result<MetricsLog> log = parseMetricsJsonl("{\"step\":0}\n{\"step\":}\n", "m.jsonl");
    ASSERT_FALSE(log);
    EXPECT_EQ(log.error().context, "m.jsonl:2");
}

TEST(MetricsJsonl, NonObjectRecordIsAnError)
{
    Result<MetricsLog> log = parseMetricsJsonl("{\"step\":0}\n[1,2]\n", "m.jsonl");
    ASSERT_FALSE(log);
    EXPECT_EQ(log.error().message, "metrics record is not a JSON object");
    EXPECT_EQ(log.error().context, "m.jsonl:2");
}

} // namespace
} // namespace bs::runtime
