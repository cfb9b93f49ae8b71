#pragma once
// Records GPU activity (kernels, memcpys, memsets, synchronisations) with CUPTI's Activity API
// and appends it to a TraceStore as kernel-lane and comm-lane events, tagged with the action that
// launched each kernel. No CUPTI or CUDA types in this header: callers need neither.
//
// Use:
//   auto collector = CuptiCollector::start(store, options);
//   if (!collector) { log(collector.error().describe()); /* fall back to host timestamps */ }
//   (*collector)->pushActionTag({stage, EventKind::Forward, mb, version}); ...launch...; popActionTag();
//   (*collector)->stop(); // final flush; events are in the store
//
// Only one collector can be active in a process (CUPTI's buffer callbacks are process-wide).
// When CUPTI cannot run (no GPU or driver, another profiler such as Nsight Systems already holds
// CUPTI, a CUPTI runtime that differs from the headers, or a build without the CUDA toolkit)
// start() returns ErrorCode::Unavailable with a message that says which, and nothing is enabled.

#include "base/result.h"
#include "profiler/cupti/action_tag.h"
#include "profiler/cupti/activity_correlator.h"
#include "profiler/trace/trace_store.h"

#include <chrono>
#include <cstddef>
#include <memory>

namespace bs::profiler::cupti {

struct CuptiOptions
{
    std::size_t bufferBytes = std::size_t{8} << 20;  ///< per activity buffer (CUPTI asks for many)
    std::chrono::milliseconds flushInterval{200};    ///< forced flush period, so a GUI updates live; 0 = none
    /// Host steady-clock ns that is time 0 of the trace; 0 = the moment start() is called.
    TimeNs origin = 0;
};

struct CollectorStats
{
    CorrelatorStats records;
    std::uint64_t buffersCompleted = 0;
    std::uint64_t flushes = 0;
};

/// True when this build contains the CUPTI collector (the CUDA toolkit was found at configure).
bool cuptiBuilt();

class CuptiCollector
{
public:
    /// Enables activity collection into `store` (which must outlive the collector).
    static Result<std::unique_ptr<CuptiCollector>> start(TraceStore& store, const CuptiOptions& options = {});
    ~CuptiCollector(); ///< stops if still running

    CuptiCollector(const CuptiCollector&) = delete;
    CuptiCollector& operator=(const CuptiCollector&) = delete;

    /// Tags the GPU work the calling thread launches until the matching pop (a per-thread stack).
    Status pushActionTag(const ActionTag& tag);
    Status pushActionTag(int stage, EventKind kind, int microbatch, int version)
    {
        return pushActionTag(ActionTag{stage, kind, microbatch, version});
    }
    Status popActionTag();
    /// The GPU work on `cudaStream` (a cudaStream_t) of CUDA device `device` is stage `stage`'s,
    /// whichever thread launched it and whatever tag it carries (activity_correlator.h).
    Status bindStream(int stage, int device, void* cudaStream);

    /// Forces CUPTI to hand over every buffer now (also done every flushInterval).
    Status flush();
    /// Final flush, disables collection, places records still waiting for a tag, writes the
    /// dropped-record count into the store's meta ("cupti.dropped_records"). Idempotent.
    Status stop();

    CollectorStats stats() const;
    /// Records CUPTI reported dropped so far (a gap in the kernel lane, not a bubble).
    std::uint64_t droppedRecords() const { return stats().records.droppedRecords; }

    class Impl;

private:
    explicit CuptiCollector(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace bs::profiler::cupti
