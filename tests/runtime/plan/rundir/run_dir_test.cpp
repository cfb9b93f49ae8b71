#include "profiler/io/chrome_trace.h"
#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/plan/rundir/run_dir_writer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "temp_dir.h"

namespace bs::runtime {
namespace {

using testing::slurp;
using testing::TempDir;

nlohmann::json record(int step, double loss)
{
    // per_stage as the writer's StageMetrics objects (the reader checks their fields).
    return {{"step", step}, {"train_loss", loss}, {"tokens_per_s_virtual", 1234.5},
        {"per_stage",
            nlohmann::json::array({{{"stage", 0}, {"mean_drift", 0.5}}, {{"stage", 1}, {"mean_drift", 0.25}}})}};
}

TEST(RunDir, WrittenRunReadsBackCompletely)
{
    TempDir tmp;
    const auto dir = tmp.path() / "run1";
    RunConfig config = demoConfig();
    config.training.steps = 3;
    profiler::TraceMeta meta;
    meta.stages = 2;
    profiler::TraceEvent e;
    e.stage = 1;
    e.start = 5;
    e.end = 9;
    e.microbatch = 4;
    {
        Result<RunDirWriter> writer = RunDirWriter::create(dir);
        ASSERT_TRUE(writer) << writer.error().describe();
        ASSERT_TRUE(writer->writeConfig(config));
        for (int step = 0; step < 3; ++step) {
            ASSERT_TRUE(writer->appendMetrics(record(step, 5.0 - step)));
        }
        ASSERT_TRUE(writer->writeTrace(*profiler::makeSnapshot(meta, {e})));
        ASSERT_TRUE(writer->writeSummary({{"final_train_loss", 3.0}, {"losses", {5.0, 4.0, 3.0}}}));
    }
    Result<RunDirContents> run = readRunDir(dir);
    ASSERT_TRUE(run) << run.error().describe();
    EXPECT_EQ(run->config, config);
    ASSERT_EQ(run->metrics.size(), 3u);
    for (int step = 0; step < 3; ++step) {
        EXPECT_EQ(run->metrics[static_cast<std::size_t>(step)], record(step, 5.0 - step));
    }
    ASSERT_TRUE(run->summary);
    EXPECT_EQ((*run->summary)["final_train_loss"], 3.0);
    ASSERT_TRUE(run->trace);
    Result<profiler::ChromeTrace> trace = profiler::readChromeTraceFile(*run->trace);
    ASSERT_TRUE(trace) << trace.error().describe();
    ASSERT_EQ(trace->events.size(), 1u);
    EXPECT_EQ(trace->events[0].microbatch, 4);
    auto snapshot = readRunTrace(*run);
    ASSERT_TRUE(snapshot) << snapshot.error().describe();
    ASSERT_EQ((*snapshot)->size(), 1u);
    EXPECT_EQ((**snapshot)[0].microbatch, 4);
    EXPECT_TRUE(run->warnings.empty());
}

TEST(RunDir, EachMetricsRecordIsOnDiskWhenAppendReturns)
{
    TempDir tmp;
    Result<RunDirWriter> writer = RunDirWriter::create(tmp.path(), {.overwrite = false, .durable = true});
    ASSERT_TRUE(writer);
    ASSERT_TRUE(writer->appendMetrics(record(0, 1.0)));
    // Read while the writer is still open, as a crash would leave it.
    EXPECT_EQ(slurp(tmp.path() / kMetricsFileName), record(0, 1.0).dump() + "\n");
    ASSERT_TRUE(writer->appendMetrics(record(1, 0.5)));
    Result<MetricsLog> log = parseMetricsJsonl(slurp(tmp.path() / kMetricsFileName));
    ASSERT_TRUE(log);
    EXPECT_EQ(log->records.size(), 2u);
}

TEST(RunDir, NonFiniteMetricsBecomeNull)
{
    TempDir tmp;
    Result<RunDirWriter> writer = RunDirWriter::create(tmp.path());
    ASSERT_TRUE(writer);
    ASSERT_TRUE(writer->appendMetrics({{"train_loss", std::nan("")}}));
    EXPECT_EQ(slurp(tmp.path() / kMetricsFileName), "{\"train_loss\":null}\n");
    EXPECT_FALSE(writer->appendMetrics(nlohmann::json::array({1, 2})));
}

TEST(RunDir, CrashMidRecordLeavesAReadableRunWithAWarning)
{
    TempDir tmp;
    {
        Result<RunDirWriter> writer = RunDirWriter::create(tmp.path());
        ASSERT_TRUE(writer);
        ASSERT_TRUE(writer->writeConfig(RunConfig{}));
        ASSERT_TRUE(writer->appendMetrics(record(0, 2.0)));
    }
    std::ofstream(tmp.path() / kMetricsFileName, std::ios::app) << "{\"step\":1,\"train_lo";
    Result<RunDirContents> run = readRunDir(tmp.path());
    ASSERT_TRUE(run) << run.error().describe();
    EXPECT_EQ(run->metrics.size(), 1u);
    ASSERT_EQ(run->warnings.size(), 1u);
    EXPECT_NE(run->warnings[0].find("metrics.jsonl:2: incomplete last record ignored"), std::string::npos);
    EXPECT_FALSE(run->summary);
    EXPECT_FALSE(run->trace);
    const auto noTrace = readRunTrace(*run);
    ASSERT_FALSE(noTrace);
    EXPECT_EQ(noTrace.error().code, ErrorCode::IoError);
    EXPECT_NE(noTrace.error().message.find("no trace.json"), std::string::npos);
}

TEST(RunDir, RefusesToClobberARunUnlessAskedTo)
{
    TempDir tmp;
    {
        Result<RunDirWriter> writer = RunDirWriter::create(tmp.path());
        ASSERT_TRUE(writer);
        ASSERT_TRUE(writer->appendMetrics(record(0, 2.0)));
    }
    Result<RunDirWriter> again = RunDirWriter::create(tmp.path());
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(again.error().message.find("already holds a run (metrics.jsonl)"), std::string::npos);

    Result<RunDirWriter> overwrite = RunDirWriter::create(tmp.path(), {.overwrite = true});
    ASSERT_TRUE(overwrite);
    ASSERT_TRUE(overwrite->appendMetrics(record(7, 1.0)));
    EXPECT_EQ(slurp(tmp.path() / kMetricsFileName), record(0, 2.0).dump() + "\n"); // still the old run
    ASSERT_TRUE(overwrite->writeSummary({{"steps", 1}}));
    EXPECT_EQ(slurp(tmp.path() / kMetricsFileName), record(7, 1.0).dump() + "\n"); // now the new one
    EXPECT_EQ(overwrite->dir(), tmp.path());
    EXPECT_EQ(testing::fileCount(tmp.path()), 2u); // metrics.jsonl, summary.json: no staging left
}

// Issue 14: --overwrite deleted the old run before the new one was written, so a failing new run
// (disk full, killed) lost both.
TEST(RunDir, OverwritingRunThatNeverFinishesLeavesTheOldRunWhole)
{
    TempDir tmp;
    {
        Result<RunDirWriter> old = RunDirWriter::create(tmp.path());
        ASSERT_TRUE(old);
        ASSERT_TRUE(old->writeConfig(demoConfig()));
        ASSERT_TRUE(old->appendMetrics(record(0, 2.0)));
        ASSERT_TRUE(old->writeSummary({{"steps", 1}}));
    }
    {
        Result<RunDirWriter> failing = RunDirWriter::create(tmp.path(), {.overwrite = true});
        ASSERT_TRUE(failing);
        ASSERT_TRUE(failing->appendMetrics(record(0, 9.0)));
        // ... and the run fails here: no summary.
    }
    Result<RunDirContents> run = readRunDir(tmp.path());
    ASSERT_TRUE(run) << run.error().describe();
    ASSERT_EQ(run->metrics.size(), 1u);
    EXPECT_EQ(run->metrics[0]["train_loss"], 2.0);
    ASSERT_TRUE(run->summary);
}

// Issue 14: a kill during the final write left a `.trace.json.tmp-*` file that nothing cleaned.
TEST(RunDir, StaleTempFilesOfDeadWritersAreRemoved)
{
    TempDir tmp;
    const auto stale = tmp.path() / ".trace.json.tmp-999999999-0"; // no such process
    const auto live = tmp.path() / (".trace.json.tmp-" + std::to_string(::getpid()) + "-0");
    const auto staging = tmp.path() / ".incoming-run-999999999";
    std::ofstream(stale) << "x";
    std::ofstream(live) << "x";
    std::filesystem::create_directory(staging);
    std::ofstream(staging / kMetricsFileName) << "{}\n";
    Result<RunDirWriter> writer = RunDirWriter::create(tmp.path());
    ASSERT_TRUE(writer);
    EXPECT_FALSE(std::filesystem::exists(stale));
    EXPECT_FALSE(std::filesystem::exists(staging));
    EXPECT_TRUE(std::filesystem::exists(live)); // a live writer's temp file stays
}

// Issue 14: the trace was kept in memory until the end, so SIGKILL lost all of it. Chunks per
// batch: what a killed run leaves reads back up to its last whole event, flagged as cut short.
TEST(RunDir, KilledRunKeepsItsTraceChunks)
{
    TempDir tmp;
    profiler::TraceStore store;
    profiler::TraceMeta meta;
    meta.stages = 2;
    store.setMeta(meta);
    {
        Result<RunDirWriter> writer = RunDirWriter::create(tmp.path());
        ASSERT_TRUE(writer);
        ASSERT_TRUE(writer->writeConfig(demoConfig()));
        for (int batch = 0; batch < 3; ++batch) {
            for (int i = 0; i < 4; ++i) {
                profiler::TraceEvent e;
                e.stage = static_cast<std::uint16_t>(i % 2);
                e.microbatch = batch * 4 + i;
                e.start = (batch * 4 + i) * 100;
                e.end = e.start + 50;
                store.append(e);
            }
            ASSERT_TRUE(writer->appendMetrics(record(batch, 2.0)));
            ASSERT_TRUE(writer->appendTrace(*store.snapshot()));
        }
        // killed here: no trace.json, no summary.json
    }
    const std::string whole = slurp(tmp.path() / kPartialTraceFileName);
    {
        Result<RunDirContents> run = readRunDir(tmp.path());
        ASSERT_TRUE(run) << run.error().describe();
        EXPECT_TRUE(run->cutShort);
        ASSERT_FALSE(run->warnings.empty());
        EXPECT_NE(run->warnings.back().find("cut short"), std::string::npos);
        auto trace = readRunTrace(*run);
        ASSERT_TRUE(trace) << trace.error().describe();
        ASSERT_EQ((*trace)->size(), 12u);
        EXPECT_EQ((**trace)[11].microbatch, 11);
    }
    // A kill in the middle of a chunk's write: the torn event is dropped, the rest is kept.
    std::ofstream(tmp.path() / kPartialTraceFileName, std::ios::trunc) << whole.substr(0, whole.size() - 30);
    Result<RunDirContents> torn = readRunDir(tmp.path());
    ASSERT_TRUE(torn);
    auto trace = readRunTrace(*torn);
    ASSERT_TRUE(trace) << trace.error().describe();
    EXPECT_EQ((*trace)->size(), 11u);
    // The chunks, closed, are byte for byte what the one-shot writer writes.
    EXPECT_EQ(whole + "\n]}\n", profiler::toChromeTraceJson(*store.snapshot()));
}

// A batch's record is appended after its trace chunk, never before: a process killed between the
// two then has a batch's events without its record (merges drop them), not a record without them.
TEST(RunDir, ABatchsRecordFollowsItsTraceChunk)
{
    TempDir tmp;
    profiler::TraceStore store;
    profiler::TraceMeta meta;
    meta.stages = 1;
    store.setMeta(meta);
    Result<RunDirWriter> writer = RunDirWriter::create(tmp.path());
    ASSERT_TRUE(writer);
    profiler::TraceEvent e;
    e.microbatch = 0;
    e.end = 10;
    store.append(e);
    ASSERT_TRUE(writer->appendBatch(record(0, 2.0), store.snapshot().get()));
    const std::filesystem::path partial = tmp.path() / kPartialTraceFileName;
    EXPECT_NE(slurp(partial).find("\"mb\":0"), std::string::npos) << slurp(partial);
    EXPECT_EQ(slurp(tmp.path() / kMetricsFileName), nlohmann::json(record(0, 2.0)).dump() + "\n");

    // A directory where the chunks' file would be opened: the chunk cannot be written.
    TempDir other;
    Result<RunDirWriter> blocked = RunDirWriter::create(other.path());
    ASSERT_TRUE(blocked);
    std::filesystem::create_directory(other.path() / kPartialTraceFileName);
    EXPECT_FALSE(blocked->appendBatch(record(0, 2.0), store.snapshot().get()));
    EXPECT_EQ(slurp(other.path() / kMetricsFileName), "") << "a record without its batch's events";
    // No trace: the record alone.
    EXPECT_TRUE(blocked->appendBatch(record(0, 2.0), nullptr));
    EXPECT_NE(slurp(other.path() / kMetricsFileName), "");
}

TEST(RunDir, ReaderErrors)
{
    TempDir tmp;
    Result<RunDirContents> empty = readRunDir(tmp.path());
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().code, ErrorCode::IoError);
    EXPECT_NE(empty.error().message.find("is not a run directory: config.toml is missing"), std::string::npos);
    // A directory that is not there is reported as missing, not as a run without its config.
    Result<RunDirContents> missing = readRunDir(tmp.path() / "no-such-run");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("no-such-run' does not exist"), std::string::npos)
        << missing.error().message;
    EXPECT_EQ(missing.error().message.find("config.toml"), std::string::npos) << missing.error().message;
    std::ofstream(tmp.path() / "a-file") << "x";
    Result<RunDirContents> file = readRunDir(tmp.path() / "a-file");
    ASSERT_FALSE(file);
    EXPECT_NE(file.error().message.find("a-file' is not a directory"), std::string::npos) << file.error().message;

    std::ofstream(tmp.path() / kConfigFileName) << "[pipeline]\nstages = 4\n";
    std::ofstream(tmp.path() / kSummaryFileName) << "{\"final_train_loss\": 3.0,";
    Result<RunDirContents> badSummary = readRunDir(tmp.path());
    ASSERT_FALSE(badSummary);
    EXPECT_EQ(badSummary.error().code, ErrorCode::ParseError);
    EXPECT_EQ(badSummary.error().context, (tmp.path() / kSummaryFileName).string() + ": byte 26");

    std::ofstream(tmp.path() / kSummaryFileName) << "{}";
    std::ofstream(tmp.path() / kMetricsFileName) << "{\"step\":0}\nnot json\n{\"step\":2}\n";
    Result<RunDirContents> badMetrics = readRunDir(tmp.path());
    ASSERT_FALSE(badMetrics);
    EXPECT_EQ(badMetrics.error().context, (tmp.path() / kMetricsFileName).string() + ":2");

    std::ofstream(tmp.path() / kConfigFileName) << "[pipeline]\nstagez = 4\n";
    Result<RunDirContents> badConfig = readRunDir(tmp.path());
    ASSERT_FALSE(badConfig);
    EXPECT_EQ(badConfig.error().context, (tmp.path() / kConfigFileName).string() + ":2:1");
}

TEST(RunDir, CreateFailsWhenAFileIsInTheWay)
{
    TempDir tmp;
    std::ofstream(tmp.path() / "file") << "x";
    Result<RunDirWriter> writer = RunDirWriter::create(tmp.path() / "file");
    ASSERT_FALSE(writer);
    EXPECT_EQ(writer.error().code, ErrorCode::IoError);
}

} // namespace
} // namespace bs::runtime
