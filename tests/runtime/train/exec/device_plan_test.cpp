// Where the stages of a run go (device_plan.h), for every machine this test can pretend to be:
// the probe results are arguments, so the no-GPU and CPU-only-LibTorch answers are tested here.
#include "runtime/train/exec/device_plan.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

RunConfig onDevice(const std::string& name, int stages = 8)
{
    RunConfig c;
    c.device.name = name;
    c.pipeline.stages = stages;
    return c;
}

TEST(DevicePlan, CpuPutsEveryStageOnTheCpuInFp32)
{
    auto plan = planDevices(onDevice("cpu"), 8, false, 0);
    ASSERT_TRUE(plan) << plan.error().describe();
    EXPECT_EQ(plan->stageDevice, std::vector<int>(8, -1));
    EXPECT_FALSE(plan->cuda);
    EXPECT_FALSE(plan->bf16);
    EXPECT_EQ(plan->description, "cpu");
}

TEST(DevicePlan, CpuOnlyLibTorchSaysSoAndNamesTheField)
{
    auto plan = planDevices(onDevice("cuda"), 8, false, 0);
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().code, ErrorCode::InvalidArgument); // the CLI exits 2
    EXPECT_EQ(plan.error().context, "device.name");
    EXPECT_NE(plan.error().message.find("this LibTorch build is CPU-only"), std::string::npos) << plan.error().message;
    EXPECT_NE(plan.error().message.find("--device cpu"), std::string::npos);
}

TEST(DevicePlan, NoGpuPresentSaysSo)
{
    auto plan = planDevices(onDevice("cuda:0"), 8, true, 0);
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(plan.error().message.find("no CUDA device is present"), std::string::npos) << plan.error().message;
}

TEST(DevicePlan, IndexBeyondTheDevicesListsTheAllowedOnes)
{
    auto plan = planDevices(onDevice("cuda:3"), 8, true, 2);
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().message,
        "device.name = \"cuda:3\" but this machine has 2 CUDA device(s); allowed: \"cpu\", \"cuda\", "
        "\"cuda:0\"..\"cuda:1\"");
}

TEST(DevicePlan, OneGpuHoldsEveryStageInBf16)
{
    auto plan = planDevices(onDevice("cuda"), 8, true, 1);
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->stageDevice, std::vector<int>(8, 0));
    EXPECT_TRUE(plan->bf16); // the CUDA default
    EXPECT_EQ(plan->devicesUsed, 1);
    EXPECT_EQ(plan->description, "cuda:0 (8 stages)");
}

TEST(DevicePlan, PinnedGpuIsUsedEvenWhenThereAreMore)
{
    RunConfig c = onDevice("cuda:1", 4);
    c.model.dtype = "fp32";
    auto plan = planDevices(c, 4, true, 4);
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->stageDevice, std::vector<int>(4, 1));
    EXPECT_FALSE(plan->bf16);
}

TEST(DevicePlan, SeveralGpusTakeContiguousBlocks)
{
    auto plan = planDevices(onDevice("cuda"), 8, true, 2);
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->stageDevice, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
    EXPECT_EQ(plan->devicesUsed, 2);
    EXPECT_EQ(plan->description, "cuda:0-1 (stages 0-3 | 4-7)");
    auto three = planDevices(onDevice("cuda", 4), 4, true, 3);
    ASSERT_TRUE(three);
    EXPECT_EQ(three->stageDevice, (std::vector<int>{0, 0, 1, 2}));
    EXPECT_EQ(three->description, "cuda:0-2 (stages 0-1 | 2 | 3)");
}

TEST(DevicePlan, ReferenceTrainerIsOneSlot)
{
    auto plan = planDevices(onDevice("cuda"), 1, true, 4);
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->stageDevice, std::vector<int>{0});
    EXPECT_EQ(plan->description, "cuda:0 (1 stage)");
}

} // namespace
} // namespace bs::runtime
