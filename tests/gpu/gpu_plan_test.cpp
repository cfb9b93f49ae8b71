// CPU-side tests of the torch-free GPU planning and probe (label unit: they run everywhere).
#include "runtime/plan/gpu/gpu_placement.h"
#include "runtime/plan/gpu/gpu_probe.h"

#include <gtest/gtest.h>

using namespace bs::runtime::gpu;

TEST(GpuPlan, OneGpuRunsEveryStageOnItWithTheSerialDriver)
{
    const auto plan = planGpuRun(8, 1, true);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->deviceOfStage, std::vector<int>(8, 0));
    EXPECT_EQ(plan->driver, GpuDriver::SerialVirtualTime);
    ASSERT_EQ(plan->linkAfterStage.size(), 7u);
    for (auto link : plan->linkAfterStage) {
        EXPECT_EQ(link, GpuTransport::SameDevice);
    }
}

TEST(GpuPlan, FewerGpusThanStagesPlacesContiguousBlocksWithTheThreadedDriver)
{
    const auto plan = planGpuRun(6, 4, true);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->deviceOfStage, (std::vector<int>{0, 0, 1, 2, 2, 3}));
    EXPECT_EQ(plan->driver, GpuDriver::Threaded);
    using T = GpuTransport;
    EXPECT_EQ(plan->linkAfterStage, (std::vector<T>{T::SameDevice, T::Nccl, T::Nccl, T::SameDevice, T::Nccl}));
}

TEST(GpuPlan, EightStagesOnTwoGpusAreTwoHalves)
{
    const auto plan = planGpuRun(8, 2, true);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->deviceOfStage, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
}

TEST(GpuPlan, MoreGpusThanStagesUsesOneGpuPerStage)
{
    const auto plan = planGpuRun(2, 8, true);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->deviceOfStage, (std::vector<int>{0, 1}));
    EXPECT_EQ(plan->driver, GpuDriver::Threaded);
}

TEST(GpuProbe, DeviceChoicesAlwaysStartWithTheCpu)
{
    const auto choices = deviceChoices();
    ASSERT_FALSE(choices.empty());
    EXPECT_EQ(choices.front(), "cpu");
    const auto gpus = probeGpus();
    const std::size_t n = gpus ? gpus->size() : 0;
    EXPECT_EQ(choices.size(), 1 + n + (n > 1 ? 1 : 0));
}

TEST(GpuPlan, WithoutNcclTransfersArePeerCopies)
{
    const auto plan = planGpuRun(2, 2, false);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->linkAfterStage, std::vector<GpuTransport>{GpuTransport::PeerCopy});
    EXPECT_EQ(transportName(plan->linkAfterStage[0]), "peer-copy");
}

TEST(GpuPlan, RejectsNoStagesAndNoGpus)
{
    EXPECT_EQ(planGpuRun(0, 1, true).error().code, bs::ErrorCode::InvalidArgument);
    EXPECT_EQ(planGpuRun(4, 0, true).error().code, bs::ErrorCode::Unavailable);
}

TEST(GpuProbe, WithoutAGpuSaysSoAndDoesNotCrash)
{
    const auto gpus = probeGpus();
    if (gpus.has_value()) {
        GTEST_SKIP() << gpus->size() << " GPU(s) present: " << (gpus->empty() ? "" : gpus->front().name);
    }
    EXPECT_EQ(gpus.error().code, bs::ErrorCode::Unavailable);
    EXPECT_NE(gpus.error().describe().find("no CUDA GPU"), std::string::npos) << gpus.error().describe();
}

TEST(GpuProbe, NcclVersionIsReportedWhenBuiltWithNccl)
{
#ifdef BS_TEST_HAVE_NCCL
    EXPECT_GE(ncclVersionCode(), 20000); // 2.x; the probe needs no GPU (toolchain.md §2)
#else
    // The probe dlopens libnccl.so.2 at run time, so a library the build did not find (a CUDA
    // LibTorch's nvidia-nccl wheel, an ld.so.conf entry) may still answer: 0 or a real 2.x code.
    const int code = ncclVersionCode();
    EXPECT_TRUE(code == 0 || (code >= 20000 && code < 100000)) << code;
#endif
}
