// Reproducers of issue 14 item 1: files a user (or a damaged disk) hands the readers. Each was an
// uncaught exception, a hang or an unbounded read before; each must be one error naming the file.
#include "base/atomic_file.h"
#include "base/bounded_read.h"
#include "base/time.h"
#include "profiler/io/chrome_trace.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/plan/rundir/run_dir_writer.h"
#include "runtime/plan/schedule/csv_io.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <csignal>
#include <fstream>

#include "temp_dir.h"

namespace bs::runtime {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

/// A run directory with a valid config, `summary` as summary.json and `metrics` as metrics.jsonl.
void writeRun(const fs::path& dir, const std::string& summary, const std::string& metrics)
{
    std::ofstream(dir / kConfigFileName) << "[pipeline]\nstages = 2\n";
    if (!summary.empty()) {
        std::ofstream(dir / kSummaryFileName) << summary;
    }
    if (!metrics.empty()) {
        std::ofstream(dir / kMetricsFileName) << metrics;
    }
}

TEST(HostileFiles, SummaryNumberPastDoubleRangeIsAParseError)
{
    TempDir tmp;
    writeRun(tmp.path(), "{\"final_train_loss\": 1e400}", "");
    Result<RunDirContents> run = readRunDir(tmp.path()); // was: uncaught nlohmann out_of_range
    ASSERT_FALSE(run);
    EXPECT_EQ(run.error().code, ErrorCode::ParseError);
    EXPECT_TRUE(contains(run.error().context, kSummaryFileName)) << run.error().context;
}

TEST(HostileFiles, SummaryPerStageStringWhereANumberBelongsNamesTheField)
{
    TempDir tmp;
    writeRun(tmp.path(), R"({"per_stage": [{"peak_memory_bytes": 10}, {"peak_memory_bytes": "lots"}]})", "");
    Result<RunDirContents> run = readRunDir(tmp.path()); // was: type_error in the GUI's per_stage loop
    ASSERT_FALSE(run);
    EXPECT_EQ(run.error().code, ErrorCode::ParseError);
    EXPECT_TRUE(
        contains(run.error().message, "per_stage[1].peak_memory_bytes is the string \"lots\"; allowed: an integer"))
        << run.error().message;
}

TEST(HostileFiles, SummaryPerRankStagesOfTheWrongTypeNameTheField)
{
    TempDir tmp;
    writeRun(tmp.path(), R"({"per_rank": [{"rank": 0, "stages": [0, "four"]}]})", "");
    Result<RunDirContents> run = readRunDir(tmp.path());
    ASSERT_FALSE(run);
    EXPECT_TRUE(contains(run.error().message, "per_rank[0].stages[1] is the string \"four\"")) << run.error().message;
    writeRun(tmp.path(), R"({"per_rank": {"rank": 0}})", "");
    run = readRunDir(tmp.path());
    ASSERT_FALSE(run);
    EXPECT_TRUE(contains(run.error().message, "per_rank is")) << run.error().message;
}

TEST(HostileFiles, SummaryPerStageNotObjectsIsAnError)
{
    TempDir tmp;
    writeRun(tmp.path(), R"({"per_stage": [3]})", "");
    Result<RunDirContents> run = readRunDir(tmp.path());
    ASSERT_FALSE(run);
    EXPECT_TRUE(contains(run.error().message, "per_stage[0] is the number 3; allowed: an object"))
        << run.error().message;
}

TEST(HostileFiles, MetricsStringFieldsNameLineAndField)
{
    for (const char* key : {"step", "virtual_time_s", "tokens_per_s_wall", "train_loss"}) {
        TempDir tmp;
        const std::string bad = std::string("{\"step\": 1, \"") + key + "\": \"x\"}\n";
        writeRun(tmp.path(), "", "{\"step\": 0, \"train_loss\": 2.0}\n" + bad);
        Result<RunDirContents> run = readRunDir(tmp.path());
        ASSERT_FALSE(run) << key;
        EXPECT_EQ(run.error().code, ErrorCode::ParseError);
        EXPECT_TRUE(contains(run.error().context, std::string(kMetricsFileName) + ":2: " + key)) << run.error().context;
    }
}

TEST(HostileFiles, MetricsOutOfRangeValuesAreErrors)
{
    for (const char* line : {"{\"step\": -1}", "{\"step\": 1e400}", "{\"step\": 4294967296}", "{\"wall_time_s\": -3}",
             "{\"per_stage\": [{\"mean_drift\": \"a\"}]}", "{\"per_stage\": {\"stage\": 0}}",
             "{\"per_stage\": [{\"memory_bytes\": {\"params\": 1.5}}]}"}) {
        Result<MetricsLog> log = parseMetricsJsonl(std::string(line) + "\n", "m.jsonl");
        ASSERT_FALSE(log) << line;
        EXPECT_EQ(log.error().code, ErrorCode::ParseError) << line;
        EXPECT_TRUE(contains(log.error().context, "m.jsonl:1")) << line;
    }
    // What the writer writes passes: nulls for non-finite numbers, integers where counts go.
    Result<MetricsLog> good = parseMetricsJsonl(
        R"({"step":3,"train_loss":null,"val_loss":null,"virtual_time_s":0.5,"per_stage":[{"stage":0,"mean_drift":null,"memory_bytes":{"params":12}}]})"
        "\n");
    EXPECT_TRUE(good) << good.error().describe();
}

TEST(HostileFiles, ConfigLinkedToDevZeroIsRefusedNotRead)
{
    TempDir tmp;
    fs::create_symlink("/dev/zero", tmp.path() / kConfigFileName);
    Result<RunDirContents> run = readRunDir(tmp.path()); // was: read until memory ran out
    ASSERT_FALSE(run);
    EXPECT_EQ(run.error().code, ErrorCode::IoError);
    EXPECT_TRUE(contains(run.error().message, "config file"));
    EXPECT_TRUE(contains(run.error().message, kConfigFileName));
    EXPECT_TRUE(contains(run.error().message, "it is a device")) << run.error().message;
}

TEST(HostileFiles, ConfigThatIsADirectoryIsAnIoError)
{
    TempDir tmp;
    Result<RunConfig> config = loadRunConfig(tmp.path()); // `train --config /tmp` trained with defaults
    ASSERT_FALSE(config);
    EXPECT_EQ(config.error().code, ErrorCode::IoError);
    EXPECT_TRUE(contains(config.error().message, "it is a directory")) << config.error().message;
    EXPECT_TRUE(contains(config.error().message, tmp.path().string()));
}

TEST(HostileFiles, OversizedConfigIsRefusedWithTheLimit)
{
    TempDir tmp;
    const fs::path path = tmp.path() / "big.toml";
    {
        std::ofstream out(path);
        out << "# " << std::string(kMaxConfigFileBytes, 'x') << '\n';
    }
    Result<RunConfig> config = loadRunConfig(path);
    ASSERT_FALSE(config);
    EXPECT_EQ(config.error().code, ErrorCode::IoError);
    EXPECT_TRUE(contains(config.error().message, "the limit is 4.0 MiB")) << config.error().message;
}

TEST(HostileFiles, ScheduleCsvFromDevZeroNamesTheFile)
{
    ScheduleParams params;
    Result<Schedule> schedule = readScheduleCsv("/dev/zero", params);
    ASSERT_FALSE(schedule);
    EXPECT_EQ(schedule.error().code, ErrorCode::IoError);
    EXPECT_TRUE(contains(schedule.error().message, "cannot read schedule CSV '/dev/zero'")) << schedule.error().message;
    Result<Schedule> missing = readScheduleCsv("/nonexistent/s.csv", params);
    ASSERT_FALSE(missing);
    EXPECT_TRUE(contains(missing.error().message, "'/nonexistent/s.csv'")) << missing.error().message;
}

// Found by fuzz_schedule_csv (scripts/fuzz.sh): one cell naming micro-batch 666156615 made the
// validator allocate 2.6 GB of per-micro-batch state. Now a ParseError naming the id.
TEST(HostileFiles, ScheduleCsvWithAHugeMicrobatchIdIsRefusedBeforeSizingAnything)
{
    ScheduleParams params;
    params.microbatches = 1;
    Result<Schedule> schedule = scheduleFromCsv("0F666156615", params);
    ASSERT_FALSE(schedule);
    EXPECT_EQ(schedule.error().code, ErrorCode::ParseError);
    EXPECT_TRUE(contains(schedule.error().message, "micro-batch 666156615 cannot be scheduled"))
        << schedule.error().message;
    EXPECT_TRUE(scheduleFromCsv("0F0,0B0", params)); // the smallest real schedule still reads
}

TEST(HostileFiles, FifoNamedTraceJsonIsRefusedAtOnce)
{
    TempDir tmp;
    writeRun(tmp.path(), "", "");
    ASSERT_EQ(::mkfifo((tmp.path() / kTraceFileName).c_str(), 0600), 0);
    Result<RunDirContents> run = readRunDir(tmp.path());
    ASSERT_TRUE(run) << run.error().describe();
    const auto start = std::chrono::steady_clock::now();
    auto trace = readRunTrace(*run); // was: open(2) waited for a writer forever (tune --calibrate)
    ASSERT_FALSE(trace);
    EXPECT_EQ(trace.error().code, ErrorCode::IoError);
    EXPECT_TRUE(contains(trace.error().message, "FIFO")) << trace.error().message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(HostileFiles, MetricsThatIsADirectoryIsAnIoError)
{
    TempDir tmp;
    writeRun(tmp.path(), "", "");
    fs::create_directory(tmp.path() / kMetricsFileName);
    Result<RunDirContents> run = readRunDir(tmp.path());
    ASSERT_FALSE(run);
    EXPECT_EQ(run.error().code, ErrorCode::IoError);
    EXPECT_TRUE(contains(run.error().message, "metrics file"));
}

// Issue 14: disk full on the trace said "stream error" with no path. A file-size limit makes write(2)
// fail the way a full disk does (EFBIG instead of ENOSPC), without needing a full file system.
TEST(HostileFiles, TraceWriteThatRunsOutOfSpaceNamesThePath)
{
    TempDir tmp;
    const fs::path path = tmp.path() / kTraceFileName;
    profiler::TraceMeta meta;
    meta.stages = 1;
    std::vector<profiler::TraceEvent> events(20000);
    for (std::size_t i = 0; i < events.size(); ++i) {
        events[i].start = static_cast<bs::TimeNs>(i) * 10;
        events[i].end = events[i].start + 5;
    }
    const auto snapshot = profiler::makeSnapshot(meta, events);
    struct rlimit saved = {};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    const auto previous = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = saved;
    small.rlim_cur = 64 * 1024;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const Status written =
        writeFileAtomic(path, [&](std::ostream& out) { return profiler::writeChromeTrace(out, *snapshot); });
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, previous);
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().code, ErrorCode::IoError);
    EXPECT_TRUE(contains(written.error().message, path.string())) << written.error().message;
    EXPECT_FALSE(fs::exists(path));
    EXPECT_EQ(testing::fileCount(tmp.path()), 0u); // and no temp file is left
}

TEST(BoundedRead, ReadsSmallFilesAndRefusesLargerOnes)
{
    TempDir tmp;
    const fs::path path = tmp.path() / "f";
    std::ofstream(path) << "hello";
    Result<std::string> text = readBoundedFile(path, 5, "test file");
    ASSERT_TRUE(text);
    EXPECT_EQ(*text, "hello");
    Result<std::string> over = readBoundedFile(path, 4, "test file");
    ASSERT_FALSE(over);
    EXPECT_EQ(
        over.error().message, "cannot read test file '" + path.string() + "': it is 5 bytes; the limit is 4 bytes");
    Result<MappedFile> mapped = MappedFile::open(path, 5, "test file");
    ASSERT_TRUE(mapped);
    EXPECT_EQ(mapped->text(), "hello");
    mapped->release(0, mapped->size()); // contents stay readable
    EXPECT_EQ(mapped->text(), "hello");
    EXPECT_FALSE(MappedFile::open("/dev/zero", kGiB, "test file"));
}

TEST(BoundedRead, ProcFilesThatReportSizeZeroAreStillBounded)
{
    // /proc/self/maps is a regular file whose stat size is 0: the read loop, not fstat, bounds it.
    Result<std::string> maps = readBoundedFile("/proc/self/maps", 16 * kMiB, "maps");
    ASSERT_TRUE(maps) << maps.error().describe();
    EXPECT_FALSE(maps->empty());
    EXPECT_FALSE(readBoundedFile("/proc/self/maps", 10, "maps"));
}

} // namespace
} // namespace bs::runtime
