// Recompute replays a forward's dropout masks by setting the generators dropout draws from back
// to their state before that forward (issue 31: on a GPU that is the CUDA generator of the stage's
// device; only the CPU's was saved, so recomputed masks differed there).
#include "runtime/train/model/device_p.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

TEST(RecomputeRng, TheStagesDeviceGeneratorIsTheOneSaved)
{
    const std::vector<c10::Device> cpu = detail::dropoutGeneratorDevices(-1);
    ASSERT_EQ(cpu.size(), 1u);
    EXPECT_TRUE(cpu[0].is_cpu());
    const std::vector<c10::Device> gpu = detail::dropoutGeneratorDevices(1);
    ASSERT_EQ(gpu.size(), 2u);
    EXPECT_EQ(gpu[1], c10::Device(c10::DeviceType::CUDA, 1)) << "CUDA dropout draws from cuda:1's generator";
}

TEST(RecomputeRng, RestoringTheStatesReplaysTheMasks)
{
    const std::vector<detail::RngState> states = detail::dropoutRngStates(-1);
    const torch::Tensor a = torch::dropout(torch::ones({256}), 0.5, /*train=*/true);
    detail::restoreRngStates(states);
    const torch::Tensor b = torch::dropout(torch::ones({256}), 0.5, /*train=*/true);
    EXPECT_TRUE(torch::equal(a, b));
    const torch::Tensor c = torch::dropout(torch::ones({256}), 0.5, /*train=*/true);
    EXPECT_FALSE(torch::equal(b, c)) << "without a restore the generator moves on";
}

} // namespace
} // namespace bs::runtime
