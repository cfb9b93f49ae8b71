// On a machine without a GPU (CI, this build host) the collector must refuse cleanly: an
// Unavailable error with a message a user understands, no crash, nothing enabled.
#include "profiler/cupti/cupti_collector.h"

#include <gtest/gtest.h>

#ifdef BS_WITH_CUPTI
#include <cuda_runtime_api.h>
#endif

using namespace bs::profiler;
using namespace bs::profiler::cupti;

namespace {
bool gpuPresent()
{
#ifdef BS_WITH_CUPTI
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
#else
    return false;
#endif
}
} // namespace

TEST(CuptiCollector, WithoutAGpuStartReportsUnavailableWithAPlainMessage)
{
    if (gpuPresent()) {
        GTEST_SKIP() << "a GPU is present: tests/gpu covers the collector there";
    }
    TraceStore store;
    auto collector = CuptiCollector::start(store);
    ASSERT_FALSE(collector.has_value());
    EXPECT_EQ(collector.error().code, bs::ErrorCode::Unavailable);
    const std::string text = collector.error().describe();
    if (cuptiBuilt()) {
        EXPECT_NE(text.find("no CUDA GPU"), std::string::npos) << text;
    } else {
        EXPECT_NE(text.find("CUPTI not available in this build"), std::string::npos) << text;
    }
    EXPECT_NE(text.find("host timestamps"), std::string::npos) << text;
    EXPECT_EQ(store.size(), 0u);
    // A second attempt behaves the same (nothing half-enabled was left behind).
    auto again = CuptiCollector::start(store);
    ASSERT_FALSE(again.has_value());
    EXPECT_EQ(again.error().code, bs::ErrorCode::Unavailable);
}
