// Every catalogue schedule over a grid of (p, m, N): it validates, its CSV round-trips exactly,
// and the scheduler core executes it without deadlock.

#include "runtime/plan/schedule/catalogue.h"

#include "runtime/plan/schedule/csv_io.h"
#include "runtime/plan/schedule/validate.h"
#include "runtime/plan/sim/simulator.h"

#include <gtest/gtest.h>

#include <set>

namespace bs::runtime {
namespace {

struct GridCase
{
    std::string name;
    int p, m, n;
};

std::string caseName(const testing::TestParamInfo<GridCase>& info)
{
    std::string name = info.param.name + "_p" + std::to_string(info.param.p) + "_m" + std::to_string(info.param.m)
        + "_n" + std::to_string(info.param.n);
    for (char& c : name) {
        if (c == '-') {
            c = '_';
        }
    }
    return name;
}

std::vector<GridCase> grid()
{
    std::vector<GridCase> cases;
    for (const auto& info : scheduleCatalogue()) {
        for (int p : {1, 2, 4, 8}) {
            for (int m : std::set<int>{1, p, 2 * p, 4 * p}) {
                for (int n : {1, 3}) {
                    if ((m == 1 && p == 1 && n == 3) || !info.acceptsMicrobatches(p, m, 0)) {
                        continue; // 2bw below p - 1, interleaved off multiples of p, dualpipev below 2p: rejected
                    }
                    cases.push_back({info.name, p, m, n});
                }
            }
        }
    }
    return cases;
}

class CatalogueGrid : public testing::TestWithParam<GridCase>
{};

TEST_P(CatalogueGrid, ValidatesRoundTripsAndRuns)
{
    const auto& c = GetParam();
    ScheduleParams params{.name = c.name, .stages = c.p, .microbatches = c.m, .accum = 0, .batches = c.n};
    auto schedule = makeSchedule(params);
    ASSERT_TRUE(schedule) << schedule.error().describe();
    ASSERT_TRUE(validate(*schedule));
    const ScheduleInfo& info = *findSchedule(c.name);
    EXPECT_EQ(schedule->ranks(), c.p);
    EXPECT_EQ(schedule->stages(), c.p * info.defaultStagesPerRank);

    auto reread = scheduleFromCsv(scheduleToCsv(*schedule), schedule->params);
    ASSERT_TRUE(reread) << reread.error().describe();
    EXPECT_EQ(reread->programs, schedule->programs);
    EXPECT_EQ(reread->inflightBound, schedule->inflightBound);
    EXPECT_EQ(reread->rankOfStage, schedule->rankOfStage);
    EXPECT_EQ(reread->placement, schedule->placement);

    SimulationRequest request{params, CostModel::uniform(c.p, 1000, 1000, 1000), 1};
    auto result = simulate(request);
    ASSERT_TRUE(result) << result.error().describe();
    std::size_t events = 0; // an overlapped F&B pair is recorded as its two halves
    for (const auto& program : schedule->programs) {
        for (const Action& a : program) {
            events += a.isOverlap() ? 2 : 1;
        }
    }
    EXPECT_EQ(result->trace->size(), events);
    // Busy time is the same work whatever the order: m·N·(F + I + W) per rank (a rank's cost is
    // split evenly over its chunks).
    for (const auto& stage : result->report.perStage) {
        EXPECT_EQ(stage.busy, static_cast<TimeNs>(c.m) * c.n * 3000) << "stage " << stage.stage;
        EXPECT_LE(stage.peakInflight, schedule->inflightBound[static_cast<std::size_t>(stage.stage)]);
        EXPECT_LE(stage.peakWeightVersions, schedule->weightVersionBound[static_cast<std::size_t>(stage.stage)]);
    }
}

INSTANTIATE_TEST_SUITE_P(AllSchedules, CatalogueGrid, testing::ValuesIn(grid()), caseName);

TEST(Catalogue, ListsEverySchedule)
{
    std::vector<std::string> names;
    for (const auto& info : scheduleCatalogue()) {
        names.push_back(info.name);
        EXPECT_FALSE(info.summary.empty());
    }
    EXPECT_EQ(names,
        (std::vector<std::string>{"gpipe", "1f1b", "zb-h1", "zb-h2", "pipedream", "2bw", "async-1f1b", "paci",
            "interleaved-1f1b", "looped-bfs", "interleaved-zb", "zb-v", "dualpipev", "paci-interleaved"}));
}

TEST(Catalogue, BadParametersNameTheFieldAndAllowedValues)
{
    struct Case
    {
        ScheduleParams params;
        std::string message, context;
    };
    auto params = [](std::string name, int p, int m, int accum, int n, int k) {
        ScheduleParams out;
        out.name = std::move(name);
        out.stages = p;
        out.microbatches = m;
        out.accum = accum;
        out.batches = n;
        out.extraDepth = k;
        return out;
    };
    const std::vector<Case> cases = {
        {params("nope", 8, 8, 0, 1, 0), "unknown schedule 'nope'", "gpipe, 1f1b, zb-h1"},
        {params("1f1b", 0, 8, 0, 1, 0), "stages: got 0", "1..256"},
        {params("1f1b", 8, 0, 0, 1, 0), "microbatches: got 0", "1..65536"},
        {params("1f1b", 8, 8, 0, -2, 0), "batches: got -2", "1..1000000"},
        {params("paci", 8, 8, 3, 1, 0), "must divide microbatches 8", "a divisor of 8"},
        {params("1f1b", 8, 8, 4, 1, 0), "only the paci, paci-interleaved schedules", "0 or 8"},
        {params("paci", 8, 8, -1, 1, 0), "accum: got -1", ">= 1"},
        {params("1f1b", 8, 8, 0, 1, 2), "extra-depth", "only asynchronous"},
        {params("paci", 8, 8, 0, 1, -1), "extra-depth", ">= 0"},
        {params("1f1b", 257, 8, 0, 1, 0), "stages: got 257", "1..256"},
        {params("2bw", 8, 6, 0, 1, 0), "microbatches: got 6 for 2bw", ">= stages + extra depth - 1 = 7"},
        {params("2bw", 4, 4, 0, 1, 2), "microbatches: got 4 for 2bw", "= 5"},
    };
    for (const auto& c : cases) {
        auto schedule = makeSchedule(c.params);
        ASSERT_FALSE(schedule) << c.message;
        EXPECT_EQ(schedule.error().code, ErrorCode::InvalidArgument);
        EXPECT_NE(schedule.error().message.find(c.message), std::string::npos) << schedule.error().message;
        EXPECT_NE(schedule.error().context.find(c.context), std::string::npos) << schedule.error().context;
    }
}

TEST(Catalogue, TraitsAreTheRulesEveryLayerAsks)
{
    for (const auto& info : scheduleCatalogue()) {
        EXPECT_EQ(info.takesAccumWindow(), info.name == "paci" || info.name == "paci-interleaved") << info.name;
        EXPECT_EQ(findSchedule(info.name), &info);
        EXPECT_FALSE(info.displayName.empty());
        // The stated weight policy is the one the generator produces.
        auto schedule = makeSchedule({.name = info.name, .stages = 4, .microbatches = 8, .accum = 0, .batches = 2});
        ASSERT_TRUE(schedule) << info.name;
        EXPECT_EQ(schedule->weights, info.weights) << info.name;
        EXPECT_EQ(schedule->asynchronous, info.asynchronous) << info.name;
        // Every update applies updateWindow() micro-batches.
        for (const Action& a : schedule->programs[0]) {
            if (a.kind == ActionKind::Update) {
                EXPECT_EQ(a.lastMb - a.firstMb + 1, info.updateWindow(8, 0)) << info.name;
            }
        }
    }
    EXPECT_EQ(findSchedule("PACI"), nullptr);
    const ScheduleInfo& paci = *findSchedule("paci");
    EXPECT_EQ(paci.updateWindow(8, 2), 2);
    EXPECT_EQ(paci.updateWindow(8, 0), 8);
    EXPECT_EQ(findSchedule("pipedream")->updateWindow(8, 0), 1);
    EXPECT_EQ(findSchedule("2bw")->updateWindow(8, 0), 8);
    // The lag bound is PACI's ⌈(p − s − 1 + k) / a⌉; schedules without a stated bound have none.
    const ScheduleParams params{
        .name = "paci", .stages = 8, .microbatches = 8, .accum = 4, .batches = 1, .extraDepth = 2};
    EXPECT_EQ(lagBounds(params), (std::vector<int>{3, 2, 2, 2, 2, 1, 1, 1}));
    EXPECT_EQ(findSchedule("1f1b")->lagBound(params, 0), std::nullopt);
    EXPECT_TRUE(lagBounds({.name = "pipedream", .stages = 4}).empty());
    EXPECT_EQ(scheduleNamesWhere([](const ScheduleInfo& i) { return i.asynchronous; }),
        "pipedream, 2bw, async-1f1b, paci, paci-interleaved");
    EXPECT_EQ(findSchedule("2bw")->minMicrobatches(8, 0), 7);
    EXPECT_EQ(findSchedule("paci")->minMicrobatches(8, 0), 1);
}

// The default baseline is one synchronous, one-stage-per-rank schedule (the CLI and the what-if
// compare against it without naming it): 1f1b.
TEST(Catalogue, OneDefaultBaselineWhichIsSynchronous)
{
    EXPECT_EQ(scheduleNamesWhere([](const ScheduleInfo& i) { return i.defaultBaseline; }), "1f1b");
    const ScheduleInfo& baseline = defaultBaselineSchedule();
    EXPECT_EQ(baseline.name, "1f1b");
    EXPECT_FALSE(baseline.asynchronous);
    EXPECT_FALSE(baseline.takesAccumWindow());
    EXPECT_FALSE(baseline.multiStage());
    EXPECT_EQ(baseline.family, ScheduleFamily::Flush);
}

// An imported torch.profiler job names PyTorch's class; the catalogue answers which of its
// schedules that is, on the class's placement (the classes themselves are checked against
// PyTorch's own orders by torch_peer_test).
TEST(Catalogue, PyTorchClassesMapToTheScheduleThatRunsTheSameOrder)
{
    EXPECT_EQ(findScheduleByPyTorchClass("Schedule1F1B")->name, "1f1b");
    EXPECT_EQ(findScheduleByPyTorchClass("ScheduleGPipe")->name, "gpipe");
    EXPECT_EQ(findScheduleByPyTorchClass("ScheduleInterleaved1F1B")->name, "interleaved-1f1b");
    EXPECT_EQ(findScheduleByPyTorchClass("ScheduleDualPipeV")->name, "dualpipev");
    EXPECT_EQ(findScheduleByPyTorchClass(""), nullptr); // schedules PyTorch has no class for
    EXPECT_EQ(findScheduleByPyTorchClass("1f1b"), nullptr);
    int classes = 0;
    for (const auto& info : scheduleCatalogue()) {
        if (!info.pytorchClass.empty()) {
            ++classes;
            EXPECT_EQ(findScheduleByPyTorchClass(info.pytorchClass), &info)
                << "two schedules claim " << info.pytorchClass;
        }
    }
    EXPECT_EQ(classes, 7);

    auto interleaved = paramsForPyTorchSchedule("ScheduleInterleaved1F1B", 2, 2, 8);
    ASSERT_TRUE(interleaved) << interleaved.error().describe();
    EXPECT_EQ(interleaved->name, "interleaved-1f1b");
    EXPECT_EQ(interleaved->stages, 2);
    EXPECT_EQ(interleaved->stagesPerRank, 2);
    EXPECT_EQ(interleaved->placement, Placement::Loop);
    auto schedule = makeSchedule(*interleaved);
    ASSERT_TRUE(schedule);
    EXPECT_EQ(schedule->rankOfStage, (std::vector<int>{0, 1, 0, 1}));
    auto plain = paramsForPyTorchSchedule("Schedule1F1B", 4, 1, 8);
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->name, "1f1b");
    EXPECT_EQ(plain->placement, Placement::OnePerRank);

    auto unknown = paramsForPyTorchSchedule("ScheduleMine", 2, 1, 8);
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("'ScheduleMine'"), std::string::npos);
    EXPECT_NE(unknown.error().context.find("ScheduleInterleaved1F1B"), std::string::npos) << unknown.error().context;
    auto twoStages = paramsForPyTorchSchedule("Schedule1F1B", 2, 2, 8);
    ASSERT_FALSE(twoStages);
    EXPECT_NE(twoStages.error().message.find("stages-per-rank"), std::string::npos) << twoStages.error().message;
    auto badM = paramsForPyTorchSchedule("ScheduleInterleaved1F1B", 4, 2, 6); // m must be a multiple of p
    ASSERT_FALSE(badM);
    EXPECT_NE(badM.error().message.find("microbatches"), std::string::npos) << badM.error().message;
}

// 2bw holds two weight versions: valid exactly from m = p + k − 1 on (the validator counts the
// versions held; the parameter check names the rule before generating).
TEST(Catalogue, TwoBwNeedsMicrobatchesCoveringTheDepth)
{
    for (int p : {2, 4, 8}) {
        for (int k : {0, 1, 2}) {
            for (int m = 1; m <= p + k + 1; ++m) {
                auto schedule = makeSchedule(
                    {.name = "2bw", .stages = p, .microbatches = m, .accum = 0, .batches = 3, .extraDepth = k});
                EXPECT_EQ(static_cast<bool>(schedule), m >= p + k - 1) << "p=" << p << " k=" << k << " m=" << m;
                if (!schedule) {
                    EXPECT_EQ(schedule.error().code, ErrorCode::InvalidArgument);
                }
            }
        }
    }
}

// The m a what-if of window a simulates (microbatchesForWindow): the fewest multiple of a the
// schedule's rules take, which makeSchedule then accepts with that a; a itself where nothing binds.
TEST(Catalogue, MicrobatchesForWindowIsTheFewestWholeWindowsTheRulesTake)
{
    const ScheduleInfo& interleavedPaci = *findSchedule("paci-interleaved");
    EXPECT_EQ(interleavedPaci.microbatchesForWindow(4, 2, 0), 4);
    EXPECT_EQ(interleavedPaci.microbatchesForWindow(4, 3, 0), 12); // lcm(3, 4)
    EXPECT_EQ(interleavedPaci.microbatchesForWindow(4, 8, 0), 8);
    EXPECT_EQ(findSchedule("paci")->microbatchesForWindow(4, 3, 0), 3);
    EXPECT_EQ(findSchedule("interleaved-1f1b")->microbatchesForWindow(4, 6, 0), 12);
    EXPECT_EQ(findSchedule("dualpipev")->microbatchesForWindow(4, 3, 0), 9); // >= 2p, a multiple of 3
    EXPECT_EQ(findSchedule("2bw")->microbatchesForWindow(8, 2, 0), 8); // >= p - 1
    EXPECT_EQ(interleavedPaci.microbatchesForWindow(4, 0, 0), 0); // no window: nothing to round
    for (const auto& info : scheduleCatalogue()) {
        for (int p : {1, 3, 4, 8}) {
            for (int a = 1; a <= 9; ++a) {
                const int m = info.microbatchesForWindow(p, a, 0);
                EXPECT_EQ(m % a, 0) << info.name;
                EXPECT_TRUE(info.acceptsMicrobatches(p, m, 0)) << info.name << " p=" << p << " a=" << a;
                for (int fewer = a; fewer < m; fewer += a) {
                    EXPECT_FALSE(info.acceptsMicrobatches(p, fewer, 0)) << info.name << " p=" << p << " m=" << fewer;
                }
                const int accum = info.takesAccumWindow() ? a : 0;
                const int v = info.multiStage() ? info.defaultStagesPerRank : 0;
                EXPECT_TRUE(makeSchedule({.name = info.name,
                    .stages = p,
                    .microbatches = m,
                    .accum = accum,
                    .batches = 2,
                    .stagesPerRank = v}))
                    << info.name << " p=" << p << " m=" << m << " a=" << accum;
            }
        }
    }
}

} // namespace
} // namespace bs::runtime
