// Numbers in a trace never size memory or place a rank wrongly (issue 33): a label's stage or
// micro-batch past the bounds (kineto_trace.h) and a distributedInfo.rank that is not an integer
// in 0..world_size-1 are refused naming the field, before anything is allocated. Before,
// `PP:999999999F0` ran 27 s to std::bad_alloc, `PP:0F2147483647` exited 1, and a rank of 99, -1,
// "0" or 2^40 was read as rank 0 (stage order swapped, transfers unmatched, no warning).

#include "profiler/import/job_import.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace bs::profiler::kineto {
namespace {

namespace fs = std::filesystem;
const std::string kData = BS_KINETO_DATA_DIR;

nlohmann::json fixture(const std::string& file)
{
    gzFile f = gzopen((kData + "/" + file).c_str(), "rb");
    std::string text;
    char buf[1 << 16];
    for (int n = 0; (n = gzread(f, buf, sizeof buf)) > 0;) {
        text.append(buf, static_cast<std::size_t>(n));
    }
    gzclose(f);
    return nlohmann::json::parse(text);
}

/// Imports `trace` written to a temp file; the error, which the test expects.
Error importRefused(const nlohmann::json& trace, double* seconds = nullptr)
{
    const fs::path path = fs::temp_directory_path()
        / ("bs_kineto_bounds_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())
            + ".json");
    std::ofstream(path) << trace.dump();
    const auto start = std::chrono::steady_clock::now();
    auto job = importKinetoJob({path.string()});
    if (seconds) {
        *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    fs::remove(path);
    EXPECT_FALSE(job) << "imported: " << (job ? job->stages : 0) << " stages";
    return job ? Error{} : job.error();
}

TEST(KinetoBounds, RankOutsideTheJobIsRefusedNeverReadAsRankZero)
{
    const nlohmann::json rank1 = fixture("1f1b-2/rank1.json.gz");
    for (const nlohmann::json& bad : {nlohmann::json(99), nlohmann::json(-1), nlohmann::json("0"),
             nlohmann::json(std::int64_t{1} << 40), nlohmann::json(2), nlohmann::json(1.5)}) {
        nlohmann::json trace = rank1;
        trace["distributedInfo"]["rank"] = bad;
        const Error e = importRefused(trace);
        EXPECT_EQ(e.code, ErrorCode::ParseError) << bad;
        EXPECT_NE(
            e.message.find("distributedInfo.rank: got " + bad.dump() + "; allowed: an integer in 0..1 (world_size 2)"),
            std::string::npos)
            << e.describe();
    }
    nlohmann::json trace = rank1;
    trace["distributedInfo"]["world_size"] = "2";
    EXPECT_NE(
        importRefused(trace).message.find("distributedInfo.world_size: got \"2\"; allowed: an integer in 1..65536"),
        std::string::npos);
}

/// The trace with the first event named `from` renamed `to`.
nlohmann::json renamed(nlohmann::json trace, const std::string& from, const std::string& to)
{
    for (auto& e : trace["traceEvents"]) {
        if (e.value("name", "") == from) {
            e["name"] = to;
            return trace;
        }
    }
    ADD_FAILURE() << "no event " << from;
    return trace;
}

TEST(KinetoBounds, LabelNumbersPastTheBoundsAreRefusedBeforeAnythingIsSized)
{
    const nlohmann::json interleaved = fixture("interleaved-2/rank0.json.gz"); // PP: labels
    struct Case
    {
        nlohmann::json trace;
        std::string message;
    };
    const std::vector<Case> cases = {
        {renamed(interleaved, "PP:0F0", "PP:999999999F0"), "a label names stage 999999999; allowed: 0..1023"},
        {renamed(interleaved, "PP:0F0", "PP:1024F0"), "a label names stage 1024; allowed: 0..1023"},
        {renamed(interleaved, "PP:0F0", "PP:0F2147483647"), "a label names micro-batch 2147483647; allowed: 0..65535"},
        {renamed(interleaved, "PP:0F0", "PP:0F65536"), "a label names micro-batch 65536; allowed: 0..65535"},
        {renamed(fixture("gpipe-2/rank0.json.gz"), "Forward 0", "Forward 999999"), "a label names micro-batch 999999"},
    };
    for (const Case& c : cases) {
        double seconds = 0;
        const Error e = importRefused(c.trace, &seconds);
        EXPECT_EQ(e.code, ErrorCode::ParseError);
        EXPECT_NE(e.message.find(c.message), std::string::npos) << e.describe();
        EXPECT_LT(seconds, 5.0) << c.message;
    }
}

} // namespace
} // namespace bs::profiler::kineto
