#pragma once
// GPU timestamps (CUPTI's clock, ns) to the host clock the rest of the trace uses.
//
// At start the collector samples (host steady_clock, cuptiGetTimestamp, host steady_clock) a few
// times and keeps the tightest sample: the GPU reading is taken to coincide with the midpoint of
// the two host readings, so the error is at most half that sample's latency (typically < 1 us).
// A second sample at a later flush gives the relative rate of the two clocks (drift, ppm-scale),
// so long runs do not slide. Conversion is then linear: host = hostRef + (gpu − gpuRef) · rate.

#include "profiler/trace/trace_event.h"

#include <cstdint>
#include <span>

namespace bs::profiler::cupti {

/// One paired reading of both clocks.
struct ClockSample
{
    TimeNs hostBefore = 0; ///< host steady clock just before reading the GPU clock
    std::uint64_t gpu = 0; ///< cuptiGetTimestamp
    TimeNs hostAfter = 0;  ///< host steady clock just after
};

class ClockSync
{
public:
    ClockSync() = default;
    /// Reference point from the tightest of the samples (smallest hostAfter − hostBefore).
    /// Precondition: samples is not empty.
    static ClockSync fromSamples(std::span<const ClockSample> samples);

    /// Sets the rate from a later sample; ignored unless it is at least 1 ms of GPU time after the
    /// reference (too short an interval would turn jitter into rate error).
    void refine(const ClockSample& later);

    /// Host steady-clock ns for a GPU timestamp.
    TimeNs toHost(std::uint64_t gpu) const;

    std::uint64_t gpuRef() const { return m_gpuRef; }
    TimeNs hostRef() const { return m_hostRef; }
    double rate() const { return m_rate; }

private:
    std::uint64_t m_gpuRef = 0;
    TimeNs m_hostRef = 0;
    double m_rate = 1.0;
};

} // namespace bs::profiler::cupti
