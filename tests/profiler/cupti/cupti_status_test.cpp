#include "profiler/cupti/cupti_status.h"

#include <cupti.h>
#include <gtest/gtest.h>

using namespace bs::profiler::cupti::detail;

TEST(CuptiStatus, AnotherProfilerHoldingCuptiIsSaidPlainly)
{
    const auto e = cuptiFailure("cuptiActivityEnable", CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT_EQ(e.code, bs::ErrorCode::Unavailable);
    EXPECT_NE(e.message.find("another profiler"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("host timestamps"), std::string::npos) << e.message;
    EXPECT_NE(e.context.find("cuptiActivityEnable -> 39"), std::string::npos) << e.context;
}

TEST(CuptiStatus, Error999MeansNoGpuOrDriver)
{
    const auto e = cuptiFailure("cuptiActivityEnable", CUPTI_ERROR_UNKNOWN);
    EXPECT_EQ(e.code, bs::ErrorCode::Unavailable);
    EXPECT_NE(e.message.find("no usable GPU or CUDA driver"), std::string::npos) << e.message;
    EXPECT_NE(e.context.find("999"), std::string::npos) << e.context;
}

TEST(CuptiStatus, NoGpuNamesTheCudaError)
{
    const auto e = noGpu(35, "CUDA driver version is insufficient for CUDA runtime version");
    EXPECT_EQ(e.code, bs::ErrorCode::Unavailable);
    EXPECT_NE(e.describe().find("insufficient"), std::string::npos);
    EXPECT_NE(e.describe().find("cudaGetDeviceCount -> 35"), std::string::npos);
}
