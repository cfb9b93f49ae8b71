// Every catalogue schedule at two (p, m) (paci also with a window a < m) against golden files
// committed under tests/data/schedules: the exact per-stage action order (CSV) and the simulated
// bubble figures under one cost model, printed with 17 significant digits. A refactor of the
// catalogue, the generators or the scheduler core must leave both bit for bit as they were.
// BS_REGENERATE_GOLDEN=1 rewrites the files (only for an intended change of a schedule).

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/csv_io.h"
#include "runtime/plan/sim/simulator.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace bs::runtime {
namespace {

const std::string kDir = BS_GOLDEN_DIR;

struct GoldenCase
{
    std::string name;
    int p, m, a;
    std::string file() const
    {
        return name + "_p" + std::to_string(p) + "_m" + std::to_string(m) + (a > 0 ? "_a" + std::to_string(a) : "");
    }
};

std::vector<GoldenCase> cases()
{
    std::vector<GoldenCase> out;
    for (const auto& info : scheduleCatalogue()) {
        out.push_back({info.name, 4, 8, 0});
        out.push_back({info.name, 8, 16, 0});
    }
    out.push_back({"paci", 4, 8, 2});
    out.push_back({"paci", 8, 16, 4});
    return out;
}

bool regenerate()
{
    const char* v = std::getenv("BS_REGENERATE_GOLDEN");
    return v && std::string(v) == "1";
}

std::string slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void spit(const std::string& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

std::string g17(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// Two global batches, F 1 ms, I 1 ms, W 1 ms, U 0.2 ms, comm 0.1 ms (zero-bubble schedules' split
// backward has its own W cost, so the orders differ in time as well as in the grid).
std::string bubbleFigures(const GoldenCase& c, const Schedule& schedule)
{
    auto result =
        simulateSchedule(schedule, CostModel::uniform(c.p, 1'000'000, 1'000'000, 1'000'000, 200'000, 100'000));
    if (!result) {
        return "error: " + result.error().describe() + "\n";
    }
    const auto& r = result->report;
    std::string out = "makespan_ns," + std::to_string(r.makespan) + "\n";
    out += "bubble_fraction," + g17(r.bubbleFraction) + "\n";
    out += "steady_bubble_fraction," + g17(r.steadyBubbleFraction) + "\n";
    out += "total_idle_ns," + std::to_string(r.totalIdle) + "\n";
    for (std::size_t i = 0; i < r.idleByCause.size(); ++i) {
        out += "idle_cause_" + std::to_string(i) + "_ns," + std::to_string(r.idleByCause[i]) + "\n";
    }
    for (const auto& st : r.perStage) {
        const std::string stage = "stage_" + std::to_string(st.stage);
        out += stage + "_max_version_lag," + std::to_string(st.maxVersionLag) + "\n";
        out += stage + "_peak_inflight," + std::to_string(st.peakInflight) + "\n";
        out += stage + "_peak_weight_versions," + std::to_string(st.peakWeightVersions) + "\n";
        out += stage + "_peak_memory_bytes," + std::to_string(st.peakMemoryBytes) + "\n";
    }
    out += "throughput," + g17(result->throughputSamplesPerSecond) + "\n";
    return out;
}

class GoldenSchedules : public testing::TestWithParam<GoldenCase>
{};

TEST_P(GoldenSchedules, OrderAndBubbleFiguresAreBitForBitTheCommittedOnes)
{
    const GoldenCase& c = GetParam();
    auto schedule = makeSchedule({.name = c.name, .stages = c.p, .microbatches = c.m, .accum = c.a, .batches = 2});
    ASSERT_TRUE(schedule) << schedule.error().describe();
    const std::string csv = scheduleToCsv(*schedule);
    const std::string figures = bubbleFigures(c, *schedule);
    const std::string csvPath = kDir + "/" + c.file() + ".csv";
    const std::string figuresPath = kDir + "/" + c.file() + ".bubbles.csv";
    if (regenerate()) {
        spit(csvPath, csv);
        spit(figuresPath, figures);
        GTEST_SKIP() << "regenerated " << csvPath;
    }
    EXPECT_EQ(csv, slurp(csvPath)) << csvPath;
    EXPECT_EQ(figures, slurp(figuresPath)) << figuresPath;
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, GoldenSchedules, testing::ValuesIn(cases()), [](const testing::TestParamInfo<GoldenCase>& param) {
        std::string n = param.param.file();
        for (char& ch : n) {
            ch = ch == '-' ? '_' : ch;
        }
        return n;
    });

} // namespace
} // namespace bs::runtime
