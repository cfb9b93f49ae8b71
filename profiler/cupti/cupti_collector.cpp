#include "profiler/cupti/cupti_collector.h"

#include "profiler/cupti/activity_parser.h"
#include "profiler/cupti/cupti_status.h"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bs::profiler::cupti {

namespace {

// EXTERNAL_CORRELATION records are written only in front of an API record
// (cuptiActivityPushExternalCorrelationId, cupti_activity.h), so the RUNTIME and DRIVER kinds are
// enabled too (PyTorch launches through the runtime; libraries such as cuBLAS may launch through
// the driver). MEMCPY2 is how CUPTI reports peer-to-peer copies between two GPUs.
constexpr std::array kKinds = {
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, // first, so no GPU record precedes its tag mapping
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};

// Kinds whose absence leaves the trace usable: synchronisation records are only counted, and
// without MEMCPY2 peer copies are missing from the comm lane (one GPU has none).
constexpr bool optionalKind(CUpti_ActivityKind kind)
{
    return kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION || kind == CUPTI_ACTIVITY_KIND_MEMCPY2;
}
constexpr auto kExternalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

TimeNs hostNow()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The GPU clock read between two host readings. gpu == 0 means CUPTI could not read it.
ClockSample sampleClocks()
{
    ClockSample s;
    s.hostBefore = hostNow();
    std::uint64_t gpu = 0;
    if (cuptiGetTimestamp(&gpu) != CUPTI_SUCCESS) {
        gpu = 0;
    }
    s.gpu = gpu;
    s.hostAfter = hostNow();
    return s;
}

// CUPTI's buffer callbacks are process-wide, so is the collector. g_claimed is taken by start()
// before any CUPTI call (no lock is held across CUPTI calls: CUPTI may call back synchronously);
// g_active is what the callbacks deliver to, under g_activeMutex.
std::atomic<bool> g_claimed{false};
std::atomic<std::size_t> g_bufferBytes{std::size_t{8} << 20};
std::mutex g_activeMutex;
CuptiCollector::Impl* g_active = nullptr;

} // namespace

class CuptiCollector::Impl
{
public:
    Impl(TraceStore& store, const CuptiOptions& options, ClockSync clock, TimeNs origin)
        : m_store(store)
        , m_options(options)
        , m_correlator(clock, origin, static_cast<std::uint32_t>(kExternalKind))
    {
    }

    static void CUPTIAPI bufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* maxNumRecords)
    {
        std::size_t bytes = g_bufferBytes.load();
        bytes = (bytes + ACTIVITY_RECORD_ALIGNMENT - 1) / ACTIVITY_RECORD_ALIGNMENT * ACTIVITY_RECORD_ALIGNMENT;
        *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, bytes));
        *size = *buffer ? bytes : 0;
        *maxNumRecords = 0; // as many as fit
    }

    static void CUPTIAPI bufferCompleted(CUcontext context, std::uint32_t streamId, std::uint8_t* buffer, std::size_t,
                                         std::size_t validSize)
    {
        {
            std::lock_guard lock(g_activeMutex);
            if (g_active && buffer) {
                g_active->consume(context, streamId, buffer, validSize);
            }
        }
        std::free(buffer);
    }

    void consume(CUcontext context, std::uint32_t streamId, const std::uint8_t* buffer, std::size_t validSize)
    {
        const auto parsed = parseActivityBuffer({buffer, validSize});
        std::lock_guard lock(m_mutex);
        m_events.clear();
        m_correlator.consume(parsed.records, m_events);
        m_correlator.addUnparsed(parsed.unparsedBytes);
        m_correlator.addParsed(parsed.incompleteRecords, parsed.unknownRecords);
        std::size_t dropped = 0; // since the last query: CUPTI resets the count when asked
        if (cuptiActivityGetNumDroppedRecords(context, streamId, &dropped) == CUPTI_SUCCESS) {
            m_correlator.addDropped(dropped);
        }
        ++m_buffers;
        if (!m_events.empty()) {
            m_store.append(m_events.data(), m_events.size());
        }
        if (dropped > 0) {
            publishCounts(m_correlator.stats()); // shown live: a silent gap would read as a bubble
        }
    }

    // Writes the loss counters into the store's meta, where the UI and the run directory see them.
    void publishCounts(const CorrelatorStats& stats)
    {
        TraceMeta meta = m_store.snapshot()->meta();
        meta.attributes["cupti.dropped_records"] = std::to_string(stats.droppedRecords);
        meta.attributes["cupti.unattributed_records"] = std::to_string(stats.unattributed);
        meta.attributes["cupti.incomplete_records"] = std::to_string(stats.incompleteRecords);
        m_store.setMeta(std::move(meta));
    }

    void startFlusher()
    {
        if (m_options.flushInterval.count() <= 0) {
            return;
        }
        m_flusher = std::jthread([this](std::stop_token stop) {
            std::mutex mutex;
            std::unique_lock lock(mutex);
            while (!m_wake.wait_for(lock, stop, m_options.flushInterval, [] { return false; })) {
                if (stop.stop_requested()) {
                    return;
                }
                (void)flushNow();
            }
        });
    }

    Status flushNow()
    {
        const CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        const ClockSample later = sampleClocks();
        std::lock_guard lock(m_mutex);
        ++m_flushes;
        if (later.gpu != 0) {
            ClockSync clock = m_correlator.clock();
            clock.refine(later);
            m_correlator.setClock(clock);
        }
        if (r != CUPTI_SUCCESS) {
            return detail::cuptiFailure("cuptiActivityFlushAll", r);
        }
        return ok();
    }

    Status stop()
    {
        if (m_stopped) {
            return ok();
        }
        m_stopped = true;
        if (m_flusher.joinable()) {
            m_flusher.request_stop();
            m_flusher.join();
        }
        Status flushed = flushNow();
        for (auto it = kKinds.rbegin(); it != kKinds.rend(); ++it) {
            cuptiActivityDisable(*it);
        }
        CorrelatorStats stats;
        {
            std::lock_guard lock(m_mutex);
            m_events.clear();
            m_correlator.finish(m_events);
            if (!m_events.empty()) {
                m_store.append(m_events.data(), m_events.size());
            }
            stats = m_correlator.stats();
        }
        {
            std::lock_guard lock(g_activeMutex);
            if (g_active == this) {
                g_active = nullptr;
            }
        }
        g_claimed = false;
        publishCounts(stats);
        return flushed;
    }

    Status bindStream(int stage, int device, void* stream)
    {
        std::uint32_t id = 0;
        if (const CUptiResult r = cuptiGetStreamIdEx(nullptr, static_cast<CUstream>(stream), 0, &id);
            r != CUPTI_SUCCESS) {
            return detail::cuptiFailure("cuptiGetStreamIdEx", r);
        }
        std::lock_guard lock(m_mutex);
        m_correlator.bindStream(static_cast<std::uint32_t>(device), id, stage);
        return ok();
    }

    CollectorStats stats() const
    {
        std::lock_guard lock(m_mutex);
        return CollectorStats{m_correlator.stats(), m_buffers, m_flushes};
    }

private:
    TraceStore& m_store;
    CuptiOptions m_options;
    mutable std::mutex m_mutex; // guards the correlator, m_events and the counters
    ActivityCorrelator m_correlator;
    std::vector<TraceEvent> m_events;
    std::uint64_t m_buffers = 0;
    std::uint64_t m_flushes = 0;
    bool m_stopped = false;
    std::condition_variable_any m_wake;
    std::jthread m_flusher;
};

bool cuptiBuilt() { return true; }

Result<std::unique_ptr<CuptiCollector>> CuptiCollector::start(TraceStore& store, const CuptiOptions& options)
{
    int devices = 0;
    const cudaError_t cudaStatus = cudaGetDeviceCount(&devices);
    if (cudaStatus != cudaSuccess || devices <= 0) {
        return detail::noGpu(static_cast<int>(cudaStatus),
                             cudaStatus != cudaSuccess ? cudaGetErrorString(cudaStatus) : "no device found");
    }
    std::uint32_t version = 0;
    if (cuptiGetVersion(&version) != CUPTI_SUCCESS || version != CUPTI_API_VERSION) {
        // Record layouts follow the library version: reading another version's records would be garbage.
        return makeError(ErrorCode::Unavailable,
                         "the CUPTI library loaded (API " + std::to_string(version) + ") differs from the one this build was compiled for (API "
                             + std::to_string(CUPTI_API_VERSION) + "); GPU kernels are not recorded, timings use host timestamps");
    }
    if (g_claimed.exchange(true)) {
        return makeError(ErrorCode::Unavailable, "a CUPTI collector is already running in this process");
    }
    auto release = [](Error e) {
        g_claimed = false;
        return e;
    };
    g_bufferBytes = std::max<std::size_t>(options.bufferBytes, std::size_t{1} << 20);
    if (const CUptiResult r = cuptiActivityRegisterCallbacks(&Impl::bufferRequested, &Impl::bufferCompleted); r != CUPTI_SUCCESS) {
        return release(detail::cuptiFailure("cuptiActivityRegisterCallbacks", r));
    }
    for (std::size_t i = 0; i < kKinds.size(); ++i) {
        const CUptiResult r = cuptiActivityEnable(kKinds[i]);
        const bool optional =
            optionalKind(kKinds[i]) && (r == CUPTI_ERROR_NOT_SUPPORTED || r == CUPTI_ERROR_INVALID_KIND);
        if (r != CUPTI_SUCCESS && !optional) {
            for (std::size_t j = 0; j < i; ++j) {
                cuptiActivityDisable(kKinds[j]);
            }
            return release(detail::cuptiFailure("cuptiActivityEnable", r));
        }
    }
    std::array<ClockSample, 8> samples{};
    for (auto& s : samples) {
        s = sampleClocks();
    }
    if (samples.back().gpu == 0) {
        for (auto kind : kKinds) {
            cuptiActivityDisable(kind);
        }
        return release(makeError(ErrorCode::Unavailable,
                                 "CUPTI cannot read the GPU clock; GPU kernels are not recorded, timings use host timestamps",
                                 "cuptiGetTimestamp returned 0"));
    }
    const TimeNs origin = options.origin != 0 ? options.origin : hostNow();
    auto impl = std::make_unique<Impl>(store, options, ClockSync::fromSamples(samples), origin);
    {
        std::lock_guard lock(g_activeMutex);
        g_active = impl.get();
    }
    impl->startFlusher();
    return std::unique_ptr<CuptiCollector>(new CuptiCollector(std::move(impl)));
}

CuptiCollector::CuptiCollector(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

CuptiCollector::~CuptiCollector()
{
    if (m_impl) {
        (void)m_impl->stop();
    }
}

Status CuptiCollector::pushActionTag(const ActionTag& tag)
{
    const auto id = packTag(tag);
    if (!id) {
        return makeError(ErrorCode::InvalidArgument, "action tag out of range",
                         "stage " + std::to_string(tag.stage) + " / microbatch " + std::to_string(tag.microbatch)
                             + " / version " + std::to_string(tag.version));
    }
    if (const CUptiResult r = cuptiActivityPushExternalCorrelationId(kExternalKind, *id); r != CUPTI_SUCCESS) {
        return detail::cuptiFailure("cuptiActivityPushExternalCorrelationId", r);
    }
    return ok();
}

Status CuptiCollector::popActionTag()
{
    std::uint64_t id = 0;
    if (const CUptiResult r = cuptiActivityPopExternalCorrelationId(kExternalKind, &id); r != CUPTI_SUCCESS) {
        return detail::cuptiFailure("cuptiActivityPopExternalCorrelationId", r);
    }
    return ok();
}

Status CuptiCollector::bindStream(int stage, int device, void* cudaStream)
{
    return m_impl->bindStream(stage, device, cudaStream);
}

Status CuptiCollector::flush() { return m_impl->flushNow(); }
Status CuptiCollector::stop() { return m_impl->stop(); }
CollectorStats CuptiCollector::stats() const { return m_impl->stats(); }

} // namespace bs::profiler::cupti
