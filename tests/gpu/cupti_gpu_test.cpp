// GPU tests of the CUPTI collector (ctest -L gpu). They need a CUDA GPU and a driver; without one
// every test SKIPs with the reason, so CI stays green. Not run in the session that wrote them (no
// GPU was lent): see tests/gpu/README.md.
#include "profiler/cupti/cupti_collector.h"
#include "profiler/cupti/gpu_busy.h"
#include "tests/gpu/busy_kernel.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

using namespace bs::profiler;
using namespace bs::profiler::cupti;

namespace {

std::string noGpuReason()
{
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        return std::string("no CUDA GPU: ") + cudaGetErrorString(e);
    }
    return n > 0 ? std::string() : std::string("no CUDA GPU: 0 devices");
}

#define SKIP_WITHOUT_GPU()                                                                                            \
    do {                                                                                                              \
        if (const auto reason = noGpuReason(); !reason.empty()) {                                                    \
            GTEST_SKIP() << reason;                                                                                   \
        }                                                                                                             \
    } while (false)

TimeNs hostNow()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr int kStages = 8;
constexpr long long kCycles = 200'000; // ~0.1 ms at ~2 GHz

} // namespace

TEST(CuptiGpu, CapturesTaggedKernelsForEveryStageOnTheHostClock)
{
    SKIP_WITHOUT_GPU();
    TraceStore store;
    const TimeNs origin = hostNow();
    auto collector = CuptiCollector::start(store, CuptiOptions{.origin = origin});
    ASSERT_TRUE(collector.has_value()) << collector.error().describe();
    std::array<cudaStream_t, kStages> streams{};
    for (auto& s : streams) {
        ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    }
    void* a = nullptr;
    void* b = nullptr;
    ASSERT_EQ(cudaMalloc(&a, 1 << 20), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&b, 1 << 20), cudaSuccess);
    const TimeNs before = hostNow() - origin;
    for (int stage = 0; stage < kStages; ++stage) {
        ASSERT_TRUE((*collector)->pushActionTag(stage, EventKind::Forward, 10 + stage, stage % 3).has_value());
        ASSERT_EQ(bs::gpu_test::launchBusyKernel(streams[static_cast<std::size_t>(stage)], kCycles), 0);
        ASSERT_TRUE((*collector)->popActionTag().has_value());
        if (stage + 1 < kStages) {
            ASSERT_TRUE((*collector)->pushActionTag(stage, EventKind::Send, 10 + stage, stage + 1).has_value());
            ASSERT_EQ(cudaMemcpyAsync(b, a, 1 << 20, cudaMemcpyDeviceToDevice, streams[static_cast<std::size_t>(stage)]), cudaSuccess);
            ASSERT_TRUE((*collector)->popActionTag().has_value());
        }
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const TimeNs after = hostNow() - origin;
    ASSERT_TRUE((*collector)->stop().has_value());
    const auto stats = (*collector)->stats();
    EXPECT_EQ(stats.records.droppedRecords, 0u);
    EXPECT_GE(stats.records.kernels, static_cast<std::uint64_t>(kStages));
    std::set<int> stagesWithKernels;
    int sends = 0;
    store.snapshot()->forEach([&](const TraceEvent& e) {
        // Converted to the host clock: inside the host-measured window (0.5 ms slack for sync error).
        EXPECT_GE(e.start, before - 500'000);
        EXPECT_LE(e.end, after + 500'000);
        if (e.lane == Lane::Kernel && e.aux == static_cast<std::uint16_t>(EventKind::Forward)) {
            EXPECT_EQ(e.microbatch, 10 + e.stage);
            EXPECT_EQ(e.version, e.stage % 3);
            EXPECT_GT(e.duration(), 10'000); // the spin kernel runs ~0.1 ms
            stagesWithKernels.insert(e.stage);
        }
        if (e.lane == Lane::Comm) {
            EXPECT_EQ(e.kind, EventKind::Send);
            EXPECT_EQ(e.aux, e.stage + 1);
            EXPECT_EQ(e.bytes, 1 << 20);
            ++sends;
        }
    });
    EXPECT_EQ(static_cast<int>(stagesWithKernels.size()), kStages);
    EXPECT_EQ(sends, kStages - 1);
    EXPECT_EQ(store.snapshot()->meta().attributes.at("cupti.dropped_records"), "0");
    const Report report = analyzeGpu(*store.snapshot(), AnalysisOptions{});
    ASSERT_EQ(static_cast<int>(report.perStage.size()), kStages);
    for (const auto& st : report.perStage) {
        EXPECT_GT(st.busy, 0) << "stage " << st.stage;
    }
    cudaFree(a);
    cudaFree(b);
    for (auto s : streams) {
        cudaStreamDestroy(s);
    }
}

TEST(CuptiGpu, TimedFlushDeliversEventsWhileRunning)
{
    SKIP_WITHOUT_GPU();
    TraceStore store;
    auto collector = CuptiCollector::start(store, CuptiOptions{.flushInterval = std::chrono::milliseconds(50)});
    ASSERT_TRUE(collector.has_value()) << collector.error().describe();
    ASSERT_TRUE((*collector)->pushActionTag(0, EventKind::Forward, 0, 0).has_value());
    for (int i = 0; i < 20; ++i) {
        ASSERT_EQ(bs::gpu_test::launchBusyKernel(nullptr, kCycles), 0);
    }
    ASSERT_TRUE((*collector)->popActionTag().has_value());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_GE(store.size(), 20u) << "no forced flush reached the store before stop()";
    EXPECT_GT((*collector)->stats().flushes, 0u);
    ASSERT_TRUE((*collector)->stop().has_value());
}

TEST(CuptiGpu, SecondCollectorInTheSameProcessIsRefusedPlainly)
{
    SKIP_WITHOUT_GPU();
    TraceStore store;
    auto first = CuptiCollector::start(store);
    ASSERT_TRUE(first.has_value()) << first.error().describe();
    auto second = CuptiCollector::start(store);
    ASSERT_FALSE(second.has_value());
    EXPECT_EQ(second.error().code, bs::ErrorCode::Unavailable);
    ASSERT_TRUE((*first)->stop().has_value());
}
