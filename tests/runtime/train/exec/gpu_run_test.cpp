// Training on a GPU (label gpu): built in every build, SKIPs without a CUDA device (and on a
// CPU-only LibTorch). On a GPU it checks what issue 11 promises of a one-GPU run: the same losses
// as the CPU in fp32 (1f1b and paci), every action's kernels in the trace under its stage (CUPTI),
// CUDA-event timings, CUDA memory per stage by kind, and bf16 training.
#include "runtime/train/exec/run_session.h"
#include "runtime/train/model/device_memory.h"
#include "runtime/train/model/pipeline_model.h"
#include "runtime/train/model/torch_devices.h"
#include "tests/runtime/train/model/test_tokens.h"
#include "tests/support/tiny_run_config.h"
#include "tests/support/train_run.h"

#include <gtest/gtest.h>

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
    bs::test::TrainedRun run = bs::test::trainRun(config);
    if (trace) {
        *trace = run.trace;
    }
    return run.summary;
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

// --recompute with dropout on a GPU: the recomputed forward draws the masks the forward drew
// (the CUDA generator's state is replayed, issue 31), so the losses equal the stored-activation run.
TEST(GpuRun, RecomputeReplaysTheForwardsDropoutMasks)
{
    if (!haveGpu()) {
        GTEST_SKIP() << (torchHasCuda() ? "no CUDA device" : "CPU-only LibTorch");
    }
    RunConfig config = bs::test::tinyRunConfig("1f1b", 4, 4, 4);
    config.model.dtype = "fp32";
    config.model.shape.dropout = 0.1;
    config.device.name = "cuda:0";
    const RunSummary stored = train(config);
    config.model.recompute = true;
    const RunSummary recomputed = train(config);
    ASSERT_EQ(stored.losses.size(), recomputed.losses.size());
    for (std::size_t i = 0; i < stored.losses.size(); ++i) {
        EXPECT_NEAR(recomputed.losses[i], stored.losses[i], 1e-5 * stored.losses[i]) << "step " << i;
    }
}

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

// Stages on GPUs hand tensors over without host memory: on one GPU the receiver uses the
// producer's tensor (zero copy), across two GPUs a device-to-device copy; the loss equals the
// CPU's, and the CUDA memory per stage balances back to zero activations once every backward ran
// (a shared buffer's free lands on the stage that allocated it, whoever frees it).
void handOffsOnTheGpu(const std::vector<int>& devices, std::int64_t expectSame, std::int64_t expectPeer)
{
    const int p = static_cast<int>(devices.size());
    ModelOptions o = test::tinyModelOptions(p, 1, WeightPolicy::Flush);
    const TokenFn tokens = test::patternTokens(o.shape, o.microBatchSize);
    double cpuLoss = 0;
    {
        auto cpu = PipelineModel::create(o, tokens);
        ASSERT_TRUE(cpu) << cpu.error().describe();
        for (int s = 0; s < p; ++s) {
            ASSERT_TRUE(cpu->forward(s, 0));
        }
        cpuLoss = cpu->loss(0).value_or(-1);
    }
    o.stageDevice = devices;
    AllocatorStats* stats = detail::cudaAllocatorStats();
    ASSERT_NE(stats, nullptr);
    DeviceMemoryAttributor memory(*stats, devices);
    installDeviceMemory(&memory);
    {
        auto gpu = PipelineModel::create(o, tokens);
        ASSERT_TRUE(gpu) << gpu.error().describe();
        std::vector<std::int64_t> before;
        for (int mb = 0; mb < 4; ++mb) {
            if (mb == 1) {
                // After a first micro-batch: cuBLAS allocates one workspace per (handle, stream)
                // through the caching allocator on a stage's first matmul and never frees it
                // (PyTorch's CublasHandlePool.cpp); it is not an activation the stage keeps.
                for (int s = 0; s < p; ++s) {
                    before.push_back(memory.stage(s).liveOf(MemoryCategory::Activations));
                }
            }
            for (int s = 0; s < p; ++s) {
                ASSERT_TRUE(gpu->forward(s, mb));
            }
            for (int s = p - 1; s >= 0; --s) {
                ASSERT_TRUE(gpu->backward(s, mb));
            }
        }
        const HandOffCounts c = gpu->handOffCounts();
        EXPECT_EQ(c.hostStaged, 0);
        EXPECT_EQ(c.cloned, 0);
        EXPECT_EQ(c.sameDevice, 4 * expectSame);
        EXPECT_EQ(c.peerCopies, 4 * expectPeer);
        EXPECT_LE(std::abs(gpu->loss(0).value_or(-1) - cpuLoss) / cpuLoss, 1e-4);
        EXPECT_EQ(memory.sharedBuffers(), 0U) << "every shared hand-off buffer was freed and settled";
        for (int s = 0; s < p; ++s) {
            const std::int64_t kept = memory.stage(s).liveOf(MemoryCategory::Activations) - before[s];
            EXPECT_GE(kept, 0) << "stage " << s;
            EXPECT_LE(kept, 64 * 1024) << "stage " << s << ": activations left after every backward";
        }
    }
    installDeviceMemory(nullptr);
}

TEST(GpuHandOff, OneGpuPassesTensorsWithoutACopy)
{
    if (!haveGpu()) {
        GTEST_SKIP() << (torchHasCuda() ? "no CUDA device" : "CPU-only LibTorch");
    }
    handOffsOnTheGpu({0, 0, 0, 0}, 6, 0);
}

TEST(GpuHandOff, TwoGpusCopyDeviceToDevice)
{
    if (!torchHasCuda() || torchCudaDeviceCount() < 2) {
        GTEST_SKIP() << "needs two CUDA devices";
    }
    handOffsOnTheGpu({0, 0, 1, 1}, 4, 2);
}

} // namespace
} // namespace bs::runtime
