#include "profiler/cupti/cupti_status.h"

#include <cupti.h>

#include <string>

namespace bs::profiler::cupti::detail {

namespace {
constexpr std::string_view kFallback = "; GPU kernels are not recorded, timings use host timestamps";
}

Error cuptiFailure(std::string_view call, int code)
{
    const char* name = nullptr;
    if (cuptiGetResultString(static_cast<CUptiResult>(code), &name) != CUPTI_SUCCESS || name == nullptr) {
        name = "unknown CUPTI error";
    }
    const std::string context = std::string(call) + " -> " + std::to_string(code) + " (" + name + ")";
    switch (code) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        return makeError(ErrorCode::Unavailable,
                         "CUPTI is held by another profiler (Nsight Systems, Nsight Compute, the PyTorch profiler...)"
                             + std::string(kFallback),
                         context);
    case CUPTI_ERROR_UNKNOWN: // what CUPTI 13 returns when there is no driver or no GPU
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_NOT_INITIALIZED:
        return makeError(ErrorCode::Unavailable,
                         "CUPTI could not start: no usable GPU or CUDA driver" + std::string(kFallback), context);
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        return makeError(ErrorCode::Unavailable,
                         "CUPTI is not permitted to profile on this machine" + std::string(kFallback), context);
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
        return makeError(ErrorCode::Unavailable,
                         "CUPTI does not support this GPU or driver" + std::string(kFallback), context);
    default:
        return makeError(ErrorCode::Unavailable, "CUPTI failed" + std::string(kFallback), context);
    }
}

Error noGpu(int cudaCode, std::string_view what)
{
    return makeError(ErrorCode::Unavailable, "no CUDA GPU available (" + std::string(what) + ")" + std::string(kFallback),
                     "cudaGetDeviceCount -> " + std::to_string(cudaCode));
}

} // namespace bs::profiler::cupti::detail
