// Training on a GPU (label gpu): built in every build, SKIPs without a CUDA device (and on a
// CPU-only LibTorch). On a GPU it checks what issue 11 promises of a one-GPU run: the same losses
// as the CPU in fp32 (1f1b and paci), every action's kernels in the trace under its stage (CUPTI),
// CUDA-event timings, CUDA memory per stage by kind, and bf16 training.
#include "runtime/exec/run_session.h"
#include "runtime/model/torch_devices.h"

#include <gtest/gtest.h>

#include "tests/support/tiny_run_config.h"

#include <cmath>
#include <set>

namespace bs::runtime {
namespace {

bool haveGpu()
{
    return torchHasCuda() && torchCudaDeviceCount() > 0;
}

RunSummary train(const RunConfig& config, std::shared_ptr<const profiler::TraceSnapshot>* trace = nullptr)
{
    auto session = RunSession::create(config, {});
    EXPECT_TRUE(session) << session.error().describe();
    if (!session) {
        return {};
    }
    const Status s = session->run();
    EXPECT_TRUE(s) << s.error().describe();
    if (trace) {
        *trace = session->trace();
    }
    return session->summary();
}

class GpuMatchesCpu : public ::testing::TestWithParam<std::string>
{};

TEST_P(GpuMatchesCpu, Fp32LossesWithin1e4)
{
    if (!haveGpu()) {
        GTEST_SKIP() << (torchHasCuda() ? "no CUDA device" : "CPU-only LibTorch");
    }
    RunConfig config = bs::test::tinyRunConfig(GetParam(), 4, 4, 4);
    config.model.dtype = "fp32";
    const RunSummary cpu = train(config);
    config.device.name = "cuda:0";
    const RunSummary gpu = train(config);
    ASSERT_EQ(cpu.losses.size(), gpu.losses.size());
    for (std::size_t i = 0; i < cpu.losses.size(); ++i) {
        EXPECT_LE(std::abs(gpu.losses[i] - cpu.losses[i]) / cpu.losses[i], 1e-4) << "step " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Schedules, GpuMatchesCpu, ::testing::Values("1f1b", "paci"));

TEST(GpuRun, EveryStagesKernelsAreTaggedAndMemoryIsPerStage)
{
    if (!haveGpu()) {
        GTEST_SKIP() << (torchHasCuda() ? "no CUDA device" : "CPU-only LibTorch");
    }
    RunConfig config = bs::test::tinyRunConfig("1f1b", 2, 4, 4);
    config.device.name = "cuda:0";
    config.profiling.trace = true;
    std::shared_ptr<const profiler::TraceSnapshot> trace;
    const RunSummary s = train(config, &trace);
    ASSERT_TRUE(trace);
    EXPECT_EQ(s.dtype, "bf16");
    const auto& attrs = trace->meta().attributes;
    if (attrs.count("cupti") && attrs.at("cupti") != "on") {
        GTEST_SKIP() << "CUPTI unavailable here: " << attrs.at("cupti");
    }
    std::set<int> stagesWithKernels;
    trace->forEach([&](const profiler::TraceEvent& e) {
        if (e.lane == profiler::Lane::Kernel && e.aux != 0xFFFF) {
            stagesWithKernels.insert(e.stage);
        }
    });
    EXPECT_EQ(stagesWithKernels.size(), 4u);
    EXPECT_EQ(attrs.at("timing"), "cuda-events");
    ASSERT_EQ(s.stages.size(), 4u);
    for (const StageMetrics& m : s.stages) {
        EXPECT_GT(m.paramBytes, 0) << "stage " << m.stage;
        EXPECT_GT(m.optimizerBytes, 0) << "stage " << m.stage;
        EXPECT_GT(m.peakBytes, m.paramBytes) << "stage " << m.stage;
        EXPECT_GT(m.peakReservedBytes, 0) << "stage " << m.stage;
    }
}

} // namespace
} // namespace bs::runtime
