#pragma once
// A CUDA-version-neutral activity record. activity_adapter.h is the only code that reads CUPTI's
// record structs (which change across CUDA 12 and 13 releases); everything else works on this.

#include <cstdint>

namespace bs::profiler::cupti {

enum class RecordKind : std::uint8_t {
    Kernel,              ///< CUPTI_ACTIVITY_KIND_KERNEL / CONCURRENT_KERNEL
    Memcpy,              ///< CUPTI_ACTIVITY_KIND_MEMCPY
    Memset,              ///< CUPTI_ACTIVITY_KIND_MEMSET
    Synchronization,     ///< CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (host waits on streams/events)
    ExternalCorrelation, ///< CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: correlationId -> externalId
};

struct ActivityRecord
{
    RecordKind kind = RecordKind::Kernel;
    std::uint64_t start = 0; ///< GPU clock, ns (CUPTI timestamp); 0 for ExternalCorrelation
    std::uint64_t end = 0;
    std::uint64_t bytes = 0;         ///< Memcpy / Memset size
    std::uint64_t externalId = 0;    ///< ExternalCorrelation only
    std::uint32_t correlationId = 0; ///< ties a GPU record to the API call (and its external id)
    std::uint32_t deviceId = 0;
    std::uint32_t streamId = 0;
    std::uint32_t externalKind = 0;  ///< CUpti_ExternalCorrelationKind (ExternalCorrelation only)
    std::uint8_t copyKind = 0;       ///< CUpti_ActivityMemcpyKind (Memcpy only)
};

} // namespace bs::profiler::cupti
