// The constrained stage partitioner against brute force, its memory budget, and the per-stage
// demand it reads from the schedule catalogue.
#include "runtime/plan/partition/stage_partitioner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

namespace bs::runtime {
namespace {

std::vector<UnitCost> randomUnits(std::mt19937& rng, int n)
{
    std::uniform_real_distribution<double> ms(0.1, 5.0);
    std::uniform_int_distribution<std::int64_t> bytes(1, 1000);
    std::vector<UnitCost> units;
    for (int i = 0; i < n; ++i) {
        const std::int64_t params = bytes(rng);
        units.push_back(UnitCost{ms(rng), ms(rng), 4 * params, params, bytes(rng)});
    }
    return units;
}

/// Every composition of n into p parts >= 1: the slowest stage of the best one within the budget
/// (infinity when none fits).
double bruteForceSlowest(const PartitionProblem& problem)
{
    const int n = static_cast<int>(problem.units.size());
    double best = std::numeric_limits<double>::infinity();
    std::vector<int> counts;
    std::function<void(int)> recurse = [&](int left) {
        const int stage = static_cast<int>(counts.size());
        if (stage == problem.stages - 1) {
            counts.push_back(left);
            const PartitionPlan plan = evaluatePartition(problem, counts);
            const bool fits = problem.budgetBytes == 0
                || std::all_of(plan.stageBytes.begin(), plan.stageBytes.end(),
                    [&](std::int64_t b) { return b <= problem.budgetBytes; });
            if (fits) {
                best = std::min(best, plan.slowestMs);
            }
            counts.pop_back();
            return;
        }
        for (int c = 1; c <= left - (problem.stages - stage - 1); ++c) {
            counts.push_back(c);
            recurse(left - c);
            counts.pop_back();
        }
    };
    recurse(n);
    return best;
}

TEST(StagePartitioner, EqualsBruteForceOnSmallCases)
{
    std::mt19937 rng(7);
    int withBudget = 0;
    int infeasible = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const int n = std::uniform_int_distribution<int>(1, 9)(rng);
        const int p = std::uniform_int_distribution<int>(1, n)(rng);
        PartitionProblem problem;
        problem.units = randomUnits(rng, n);
        problem.stages = p;
        for (int s = 0; s < p; ++s) {
            problem.demand.inflight.push_back(p - s); // 1F1B / PACI
            problem.demand.weightVersions.push_back(1 + trial % 2 * (p - s - 1)); // half the trials stash
        }
        if (trial % 3 != 0) { // a budget that binds on some splits
            const PartitionPlan even = evaluatePartition(problem, [&] {
                std::vector<int> c(static_cast<std::size_t>(p), n / p);
                c.back() += n % p;
                return c;
            }());
            problem.budgetBytes =
                *std::max_element(even.stageBytes.begin(), even.stageBytes.end()) * (trial % 4 + 2) / 5;
            ++withBudget;
        }
        const double expected = bruteForceSlowest(problem);
        auto plan = partitionStages(problem);
        if (std::isinf(expected)) {
            ++infeasible;
            ASSERT_FALSE(plan) << "trial " << trial;
            EXPECT_EQ(plan.error().context, "pipeline.memory_budget_mib");
            continue;
        }
        ASSERT_TRUE(plan) << "trial " << trial << ": " << plan.error().describe();
        EXPECT_DOUBLE_EQ(plan->slowestMs, expected) << "trial " << trial;
        ASSERT_EQ(plan->unitCount.size(), static_cast<std::size_t>(p));
        EXPECT_EQ(std::accumulate(plan->unitCount.begin(), plan->unitCount.end(), 0), n);
        for (std::size_t s = 0; s < plan->unitCount.size(); ++s) {
            EXPECT_GE(plan->unitCount[s], 1);
            if (problem.budgetBytes > 0) {
                EXPECT_LE(plan->stageBytes[s], problem.budgetBytes) << "trial " << trial << " stage " << s;
            }
        }
    }
    EXPECT_GT(withBudget, 100);
    EXPECT_GT(infeasible, 5); // the budget really did rule splits out
}

TEST(StagePartitioner, BalancesAHeavyHead)
{
    // Six equal blocks and a head worth two: the head gets a stage of its own plus the norm.
    PartitionProblem problem;
    problem.stages = 4;
    problem.units.push_back({0.1, 0.1, 0, 0, 0}); // embedding
    for (int i = 0; i < 6; ++i) {
        problem.units.push_back({1.0, 1.0, 0, 0, 0});
    }
    problem.units.push_back({0.0, 0.0, 0, 0, 0}); // final norm
    problem.units.push_back({2.0, 2.0, 0, 0, 0}); // head
    auto plan = partitionStages(problem);
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->unitCount, (std::vector<int>{3, 2, 2, 2}));
    EXPECT_DOUBLE_EQ(plan->slowestMs, 4.2);
}

TEST(StagePartitioner, SaysNoSplitFitsAndNamesTheBudget)
{
    PartitionProblem problem;
    problem.stages = 2;
    problem.units = {{1, 1, 3 << 20, 1 << 20, 1 << 20}, {1, 1, 3 << 20, 1 << 20, 1 << 20}};
    problem.demand.inflight = {2, 1};
    problem.budgetBytes = 4 << 20; // stage 0 needs 3 + 2·1 = 5 MiB
    auto plan = partitionStages(problem);
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().context, "pipeline.memory_budget_mib");
    EXPECT_NE(plan.error().message.find("budget of 4.0 MiB"), std::string::npos) << plan.error().message;
    EXPECT_NE(plan.error().message.find("least any split needs is 5.0 MiB"), std::string::npos) << plan.error().message;
    problem.budgetBytes = 5 << 20;
    EXPECT_TRUE(partitionStages(problem));
}

TEST(StagePartitioner, RefusesMoreStagesThanUnits)
{
    PartitionProblem problem;
    problem.stages = 3;
    problem.units = {{1, 1, 0, 0, 0}, {1, 1, 0, 0, 0}};
    auto plan = partitionStages(problem);
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().context, "pipeline.stages");
}

TEST(StageDemand, ComesFromTheScheduleCatalogue)
{
    ScheduleParams params;
    params.stages = 4;
    params.microbatches = 8;
    params.name = "1f1b";
    auto d = stageDemand(params);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->inflight, (std::vector<int>{4, 3, 2, 1}));
    params.name = "paci";
    params.accum = 8;
    d = stageDemand(params);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->inflight, (std::vector<int>{4, 3, 2, 1}));
    params.name = "gpipe";
    params.accum = 0;
    d = stageDemand(params);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->inflight, (std::vector<int>{8, 8, 8, 8}));
    params.name = "pipedream";
    params.microbatches = 2; // fewer than p: the steady depth p - s still shows
    d = stageDemand(params);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->inflight, (std::vector<int>{4, 3, 2, 1}));
    EXPECT_GT(d->weightVersions[0], 1);
    params.name = "nope";
    EXPECT_FALSE(stageDemand(params));
}

TEST(StagePartitioner, FlopsCostsPutTheHeadOnTheScale)
{
    const GptShape shape{.layers = 4, .dModel = 64, .heads = 4, .seqLen = 32, .vocab = 4096};
    const auto units = flopsUnitCosts(shape, 2);
    ASSERT_EQ(units.size(), static_cast<std::size_t>(layerUnitCount(shape)));
    EXPECT_GT(units.back().forwardMs, units[1].forwardMs); // a 4096-word head outweighs a 64-wide block
    EXPECT_EQ(units[1].paramBytes, 4 * shape.blockParams());
    EXPECT_EQ(units[1].staticBytes, 16 * shape.blockParams());
    EXPECT_EQ(units[1].activationBytes, shape.blockActivationBytes(2));
    std::int64_t params = 0;
    for (const UnitCost& u : units) {
        params += u.paramBytes;
    }
    EXPECT_EQ(params, 4 * shape.totalParams());
}

} // namespace
} // namespace bs::runtime

namespace bs {
namespace {

TEST(LayerUnitPartition, MapsUnitsToBlocksNormAndHead)
{
    const GptShape shape{.layers = 4};
    ASSERT_EQ(layerUnitCount(shape), 7);
    EXPECT_EQ(layerUnitName(shape, 0), "embedding");
    EXPECT_EQ(layerUnitName(shape, 3), "block 2");
    EXPECT_EQ(layerUnitName(shape, 5), "final norm");
    EXPECT_EQ(layerUnitName(shape, 6), "head");
    // embedding | blocks 0-1 | blocks 2-3 + final norm | head
    auto part = partitionFromUnits(shape, 4, {1, 2, 3, 1});
    ASSERT_TRUE(part) << part.error().describe();
    EXPECT_EQ(part->layerCount, (std::vector<int>{0, 2, 2, 0}));
    EXPECT_EQ(part->firstLayer, (std::vector<int>{0, 0, 2, 4}));
    EXPECT_EQ(part->finalNormStage, 2);
    // The block split in units: the embedding joins stage 0, norm and head the last stage.
    auto blocks = partitionLayers(shape, 2, 1, {1, 3});
    ASSERT_TRUE(blocks);
    EXPECT_EQ(blocks->unitCount, (std::vector<int>{2, 5}));
    EXPECT_EQ(blocks->finalNormStage, 1);
    auto back = partitionFromUnits(shape, 2, blocks->unitCount);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->layerCount, blocks->layerCount);
    EXPECT_FALSE(partitionFromUnits(shape, 2, {7, 0}));
    EXPECT_FALSE(partitionFromUnits(shape, 3, {2, 5}));
}

} // namespace
} // namespace bs
