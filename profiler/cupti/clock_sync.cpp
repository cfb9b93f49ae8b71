#include "profiler/cupti/clock_sync.h"

#include <algorithm>
#include <cmath>

namespace bs::profiler::cupti {

namespace {
TimeNs midpoint(const ClockSample& s) { return s.hostBefore + (s.hostAfter - s.hostBefore) / 2; }
} // namespace

ClockSync ClockSync::fromSamples(std::span<const ClockSample> samples)
{
    const auto best = std::min_element(samples.begin(), samples.end(), [](const ClockSample& a, const ClockSample& b) {
        return a.hostAfter - a.hostBefore < b.hostAfter - b.hostBefore;
    });
    ClockSync sync;
    sync.m_gpuRef = best->gpu;
    sync.m_hostRef = midpoint(*best);
    return sync;
}

void ClockSync::refine(const ClockSample& later)
{
    constexpr std::uint64_t kMinInterval = 1'000'000; // 1 ms
    if (later.gpu < m_gpuRef + kMinInterval) {
        return;
    }
    const double gpuSpan = static_cast<double>(later.gpu - m_gpuRef);
    const double hostSpan = static_cast<double>(midpoint(later) - m_hostRef);
    m_rate = hostSpan / gpuSpan;
}

TimeNs ClockSync::toHost(std::uint64_t gpu) const
{
    // Signed difference: records can start slightly before the reference sample.
    const double delta = gpu >= m_gpuRef ? static_cast<double>(gpu - m_gpuRef) : -static_cast<double>(m_gpuRef - gpu);
    return m_hostRef + static_cast<TimeNs>(std::llround(delta * m_rate));
}

} // namespace bs::profiler::cupti
