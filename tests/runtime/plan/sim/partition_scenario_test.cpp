// The what-if predicts the run's partition (GptScenario::unitsPerStage, unit_cost_model.h): an
// explicit uneven split moves each stage's busy time, and so the slowest stage, exactly by the
// sums of its layer units' costs; the FLOPs split through the unit path equals the historical one.
#include "runtime/plan/partition/stage_partitioner.h"
#include "runtime/plan/sim/tuner.h"
#include "runtime/plan/sim/unit_cost_model.h"

#include <gtest/gtest.h>

#include <numeric>

namespace bs::runtime {
namespace {

/// The tiny GPT's 11 layer units with round measured costs (ms; no weights, so updates cost 0).
std::vector<UnitCost> measuredTinyUnits()
{
    std::vector<UnitCost> units;
    units.push_back(UnitCost{0.5, 1.0, 0, 0, 1000}); // embedding
    for (int i = 0; i < 8; ++i) {
        units.push_back(UnitCost{1.0 + 0.25 * i, 2.0 + 0.5 * i, 0, 0, 2000}); // blocks grow heavier
    }
    units.push_back(UnitCost{0.1, 0.2, 0, 0, 100}); // final norm
    units.push_back(UnitCost{3.0, 6.0, 0, 0, 5000}); // head + loss
    return units;
}

GptScenario scenario(std::vector<int> unitsPerStage, std::vector<UnitCost> units = {})
{
    GptScenario s;
    s.schedule = "1f1b";
    s.stages = static_cast<int>(unitsPerStage.empty() ? 4 : unitsPerStage.size());
    s.shape = gptPreset("tiny").value();
    s.device = deviceProfile("cpu").value();
    s.accum = 4;
    s.microBatchSize = 2;
    s.batches = 2;
    s.unitsPerStage = std::move(unitsPerStage);
    s.unitCosts = std::move(units);
    s.unitCostsMicroBatch = 2;
    return s;
}

std::vector<double> busyMsPerMicroBatch(const GptScenario& s)
{
    auto request = makeGptRequest(s);
    EXPECT_TRUE(request) << request.error().describe();
    auto sim = simulate(*request);
    EXPECT_TRUE(sim) << sim.error().describe();
    std::vector<double> out;
    for (const auto& stage : sim->report.perStage) {
        out.push_back(toMillis(stage.busy) / (s.accum * s.batches));
    }
    return out;
}

TEST(PartitionScenario, ExplicitUnevenSplitMovesTheSlowestStageAsTheUnitCostsSay)
{
    const std::vector<UnitCost> units = measuredTinyUnits();
    PartitionProblem problem;
    problem.units = units;
    problem.stages = 4;
    for (const std::vector<int>& split :
        {std::vector<int>{3, 3, 3, 2}, std::vector<int>{5, 3, 1, 2}, std::vector<int>{1, 4, 4, 2}}) {
        const PartitionPlan plan = evaluatePartition(problem, split);
        const std::vector<double> busy = busyMsPerMicroBatch(scenario(split, units));
        ASSERT_EQ(busy.size(), 4u);
        double slowest = 0.0;
        for (std::size_t s = 0; s < busy.size(); ++s) {
            EXPECT_NEAR(busy[s], plan.stageMs[s], 1e-6) << "stage " << s; // F + B of its units, per micro-batch
            slowest = std::max(slowest, busy[s]);
        }
        EXPECT_NEAR(slowest, plan.slowestMs, 1e-6);
    }
    // {5, 3, 1, 2}: stage 0 = embedding + blocks 0-3 = 1.5 + 3 * (4 + 1.5) = 18 ms, the slowest.
    const std::vector<double> uneven = busyMsPerMicroBatch(scenario({5, 3, 1, 2}, units));
    EXPECT_NEAR(uneven[0], 0.5 + 1.0 + (1.0 + 1.25 + 1.5 + 1.75) * 3.0, 1e-6);
    EXPECT_NEAR(uneven[2], (1.0 + 0.25 * 7) * 3.0, 1e-6);
}

TEST(PartitionScenario, MeasuredUnitsScaleWithTheMicroBatch)
{
    GptScenario s = scenario({3, 3, 3, 2}, measuredTinyUnits());
    const std::vector<double> atTwo = busyMsPerMicroBatch(s);
    s.microBatchSize = 4; // measured at 2: twice the tokens, twice the time
    const std::vector<double> atFour = busyMsPerMicroBatch(s);
    for (std::size_t i = 0; i < atTwo.size(); ++i) {
        EXPECT_NEAR(atFour[i], 2.0 * atTwo[i], 1e-6);
    }
}

TEST(PartitionScenario, FlopsSplitThroughUnitsEqualsTheHistoricalCosts)
{
    for (const char* preset : {"tiny", "deep", "gpt2-medium"}) {
        const GptShape shape = gptPreset(preset).value();
        const DeviceProfile device = deviceProfile("h100").value();
        for (int p : {1, 2, 8}) {
            const auto historical = costModelFromGpt(shape, p, 4, device);
            const auto split = partitionLayers(shape, p, 4);
            ASSERT_TRUE(historical && split);
            const auto units = costModelFromUnits(shape, split->unitCount, 4, device);
            ASSERT_TRUE(units) << units.error().describe();
            ASSERT_EQ(units->stages.size(), historical->stages.size());
            for (std::size_t s = 0; s < units->stages.size(); ++s) {
                const StageCost& a = units->stages[s];
                const StageCost& b = historical->stages[s];
                EXPECT_EQ(a.forward, b.forward);
                EXPECT_EQ(a.backwardInput + a.backwardWeight, b.backwardInput + b.backwardWeight);
                EXPECT_EQ(a.update, b.update);
                EXPECT_EQ(a.paramBytes, b.paramBytes);
                EXPECT_EQ(a.activationBytes, b.activationBytes);
                EXPECT_EQ(a.sendBytes, b.sendBytes);
            }
        }
    }
}

TEST(PartitionScenario, DeviceProfileTimesFollowTheBlocksEachStageHolds)
{
    // gpt2-medium on 4 stages: 27 units. Moving blocks onto stage 0 makes it the slowest by
    // exactly the blocks' kernel time; the head stays where the last unit is.
    GptScenario even = scenario({});
    even.shape = gptPreset("gpt2-medium").value();
    even.device = deviceProfile("h100").value();
    even.stages = 4;
    GptScenario uneven = even;
    uneven.unitsPerStage = {10, 5, 6, 6}; // emb + 9 blocks, 5, 6, 4 + norm + head
    const auto costs = makeGptRequest(uneven);
    const auto flops = makeGptRequest(even);
    ASSERT_TRUE(costs && flops) << (costs ? flops.error().describe() : costs.error().describe());
    const TimeNs block = costs->costs.stages[1].forward / 5;
    EXPECT_EQ(costs->costs.stages[0].forward, 9 * block);
    EXPECT_EQ(costs->costs.stages[2].forward, 6 * block);
    EXPECT_GT(costs->costs.stages[3].forward, 4 * block); // the head's matmul on top
    const auto split = partitionLayers(even.shape, 4, even.microBatchSize);
    ASSERT_TRUE(split);
    const int lastBlocks = split->layerCount[3];
    EXPECT_EQ(
        costs->costs.stages[3].forward - 4 * block, flops->costs.stages[3].forward - lastBlocks * block); // the head
    EXPECT_GT(costs->costs.stages[0].forward, flops->costs.stages[0].forward); // 9 blocks instead of the FLOPs split's
}

TEST(PartitionScenario, BadPartitionsAreRefusedNamingTheField)
{
    GptScenario three = scenario({3, 3, 5});
    three.stages = 4; // three counts for four stages
    auto wrongCount = makeGptRequest(three);
    ASSERT_FALSE(wrongCount);
    EXPECT_EQ(wrongCount.error().context, "pipeline.partition");
    GptScenario s = scenario({3, 3, 3, 3}); // sums to 12, the model has 11 units
    auto wrongSum = makeGptRequest(s);
    ASSERT_FALSE(wrongSum);
    EXPECT_NE(wrongSum.error().message.find("model.layers + 3 = 11"), std::string::npos) << wrongSum.error().message;
    auto shortUnits = makeGptRequest(scenario({3, 3, 3, 2}, std::vector<UnitCost>(5)));
    ASSERT_FALSE(shortUnits);
    EXPECT_NE(shortUnits.error().context.find("unit_costs"), std::string::npos);
}

} // namespace
} // namespace bs::runtime
