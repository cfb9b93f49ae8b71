#pragma once
// A CUDA-version-neutral activity record. activity_adapter.h is the only code that reads CUPTI's
// record structs (which change across CUDA 12 and 13 releases); everything else works on this.

#include <cstdint>

namespace bs::profiler::cupti {

enum class RecordKind : std::uint8_t
{
    Kernel, ///< CUPTI_ACTIVITY_KIND_KERNEL / CONCURRENT_KERNEL
    Memcpy, ///< CUPTI_ACTIVITY_KIND_MEMCPY, and MEMCPY2 (peer to peer: srcDeviceId/dstDeviceId set)
    Memset, ///< CUPTI_ACTIVITY_KIND_MEMSET
    Synchronization, ///< CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (host waits on streams/events)
    ExternalCorrelation, ///< CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: correlationId -> externalId
    Api, ///< CUPTI_ACTIVITY_KIND_RUNTIME / DRIVER: the launching call (its thread); the
         ///< external correlation records CUPTI writes precede these
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
    std::uint32_t threadId = 0; ///< Api only: the host thread that made the call
    std::uint32_t srcDeviceId = 0; ///< peer-to-peer Memcpy (MEMCPY2) only
    std::uint32_t dstDeviceId = 0; ///< peer-to-peer Memcpy (MEMCPY2) only
    std::uint8_t copyKind = 0;       ///< CUpti_ActivityMemcpyKind (Memcpy only)
    bool peerToPeer = false; ///< a MEMCPY2 record
};

/// A GPU record (kernel, memcpy, memset) whose timestamps CUPTI has not filled in yet: a forced
/// flush (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) hands over buffers holding such records, and kernel
/// records may carry 0 timestamps when CUPTI could not time them (cupti_activity.h). They are
/// never placed: start = end = 0 would sit far before the run on the host clock.
constexpr bool incompleteGpuRecord(const ActivityRecord& r)
{
    const bool gpu = r.kind == RecordKind::Kernel || r.kind == RecordKind::Memcpy || r.kind == RecordKind::Memset;
    return gpu && (r.start == 0 || r.end == 0 || r.end < r.start);
}

} // namespace bs::profiler::cupti
