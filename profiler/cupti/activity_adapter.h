#pragma once
// The ONE place that reads CUPTI's activity record structs. Their names and layouts change across
// CUDA releases (CUpti_ActivityKernel9 in 12.x, Kernel10 in 13.0, Kernel11 in 13.2; Memcpy5 -> 6;
// Synchronization -> Synchronization2), so the record types are chosen here by CUPTI_API_VERSION
// and the offsets this code relies on are checked at compile time. Private to profiler/cupti.

#include "profiler/cupti/activity_record.h"

#include <cupti.h>

#include <cstddef>
#include <cstring>
#include <optional>

namespace bs::profiler::cupti::detail {

#if CUPTI_API_VERSION >= 130200
using KernelRecord = CUpti_ActivityKernel11;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using SyncRecord = CUpti_ActivitySynchronization2;
#elif CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using SyncRecord = CUpti_ActivitySynchronization2;
#elif CUPTI_API_VERSION >= 19 // CUDA 12.0 .. 12.9 (not built here: no CUDA 12 toolkit to check)
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
using SyncRecord = CUpti_ActivitySynchronization;
#else
#error "Bubblescope's CUPTI collector needs CUDA 12.0 or newer"
#endif
using MemsetRecord = CUpti_ActivityMemset4;
using ExternalRecord = CUpti_ActivityExternalCorrelation;
using ApiRecord = CUpti_ActivityAPI; // RUNTIME and DRIVER
using PeerCopyRecord = CUpti_ActivityMemcpyPtoP4; // MEMCPY2 (CUDA 12.0 .. 13.x)

// Compile-time checks: every record starts with its kind, records are 8-byte aligned and sized,
// and the fields the adapter reads are where the neutral code expects them to be.
template<typename R>
constexpr bool kRecordShapeOk = offsetof(R, kind) == 0 && sizeof(R) % ACTIVITY_RECORD_ALIGNMENT == 0;
static_assert(
    kRecordShapeOk<
        KernelRecord> && kRecordShapeOk<MemcpyRecord> && kRecordShapeOk<MemsetRecord> && kRecordShapeOk<SyncRecord> && kRecordShapeOk<ExternalRecord> && kRecordShapeOk<ApiRecord> && kRecordShapeOk<PeerCopyRecord>);
static_assert(offsetof(ExternalRecord, externalId) == 8 && offsetof(ExternalRecord, correlationId) == 16,
              "CUpti_ActivityExternalCorrelation changed layout");
static_assert(sizeof(decltype(KernelRecord::start)) == 8 && sizeof(decltype(KernelRecord::correlationId)) == 4);
static_assert(sizeof(decltype(MemcpyRecord::bytes)) == 8 && sizeof(decltype(MemsetRecord::bytes)) == 8);
#if CUPTI_API_VERSION >= 130000 && CUPTI_API_VERSION < 130200
// The CUDA 13.0 layouts this build was written and tested against.
static_assert(sizeof(KernelRecord) == 216 && offsetof(KernelRecord, start) == 16
              && offsetof(KernelRecord, correlationId) == 92);
static_assert(sizeof(MemcpyRecord) == 96 && offsetof(MemcpyRecord, start) == 16);
static_assert(sizeof(MemsetRecord) == 88 && sizeof(SyncRecord) == 56 && sizeof(ExternalRecord) == 24);
static_assert(sizeof(ApiRecord) == 40 && offsetof(ApiRecord, correlationId) == 32 && sizeof(PeerCopyRecord) == 96);
#endif

/// Bytes of one record of `kind` as this CUPTI version lays it out; 0 for kinds this adapter does
/// not read (the parser steps over those with CUPTI's own walker).
constexpr std::size_t recordSize(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return sizeof(ApiRecord);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        return sizeof(PeerCopyRecord);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(KernelRecord);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(MemcpyRecord);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(MemsetRecord);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(SyncRecord);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(ExternalRecord);
    default: return 0;
    }
}

template<typename R>
R load(const void* p)
{
    R r;
    std::memcpy(&r, p, sizeof(R)); // records in a buffer need not satisfy R's alignment in tests
    return r;
}

/// The neutral record for a CUPTI record at p (at least recordSize(kind) readable bytes);
/// nullopt for kinds we do not use.
inline std::optional<ActivityRecord> adaptRecord(const void* p)
{
    const auto kind = load<CUpti_Activity>(p).kind;
    ActivityRecord out;
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto k = load<KernelRecord>(p);
        out.kind = RecordKind::Kernel;
        out.start = k.start;
        out.end = k.end;
        out.correlationId = k.correlationId;
        out.deviceId = k.deviceId;
        out.streamId = k.streamId;
        return out;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto m = load<MemcpyRecord>(p);
        out.kind = RecordKind::Memcpy;
        out.start = m.start;
        out.end = m.end;
        out.bytes = m.bytes;
        out.correlationId = m.correlationId;
        out.deviceId = m.deviceId;
        out.streamId = m.streamId;
        out.copyKind = m.copyKind;
        return out;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto m = load<MemsetRecord>(p);
        out.kind = RecordKind::Memset;
        out.start = m.start;
        out.end = m.end;
        out.bytes = m.bytes;
        out.correlationId = m.correlationId;
        out.deviceId = m.deviceId;
        out.streamId = m.streamId;
        return out;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const auto s = load<SyncRecord>(p);
        out.kind = RecordKind::Synchronization;
        out.start = s.start;
        out.end = s.end;
        out.correlationId = s.correlationId;
        out.streamId = s.streamId;
        return out;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const auto m = load<PeerCopyRecord>(p);
        out.kind = RecordKind::Memcpy;
        out.peerToPeer = true;
        out.start = m.start;
        out.end = m.end;
        out.bytes = m.bytes;
        out.correlationId = m.correlationId;
        out.deviceId = m.deviceId;
        out.streamId = m.streamId;
        out.srcDeviceId = m.srcDeviceId;
        out.dstDeviceId = m.dstDeviceId;
        out.copyKind = m.copyKind;
        return out;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto a = load<ApiRecord>(p);
        out.kind = RecordKind::Api;
        out.start = a.start;
        out.end = a.end;
        out.correlationId = a.correlationId;
        out.threadId = a.threadId;
        return out;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto x = load<ExternalRecord>(p);
        out.kind = RecordKind::ExternalCorrelation;
        out.externalKind = static_cast<std::uint32_t>(x.externalKind);
        out.externalId = x.externalId;
        out.correlationId = x.correlationId;
        return out;
    }
    default: return std::nullopt;
    }
}

} // namespace bs::profiler::cupti::detail
