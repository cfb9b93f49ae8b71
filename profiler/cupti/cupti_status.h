#pragma once
// Why CUPTI could not be used, in words a user can act on. Private to profiler/cupti; takes the
// raw CUptiResult so this header needs no CUPTI include.

#include "base/result.h"

#include <string_view>

namespace bs::profiler::cupti::detail {

/// An Unavailable (or Internal, for programming errors) error for a failed CUPTI call.
/// `call` names the function, `code` is its CUptiResult.
Error cuptiFailure(std::string_view call, int code);

/// Unavailable error for a CUDA runtime that sees no usable GPU (`what`: cudaGetErrorString).
Error noGpu(int cudaCode, std::string_view what);

} // namespace bs::profiler::cupti::detail
