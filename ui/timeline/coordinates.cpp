#include "ui/timeline/coordinates.h"

#include <algorithm>
#include <cmath>

namespace bs::ui {

TimelineCoordinates::TimelineCoordinates(TimeNs traceStart, TimeNs traceEnd, double widthPx)
    : m_widthPx(std::max(1.0, widthPx))
{
    setTraceRange(traceStart, traceEnd);
    zoomToFit();
}

void TimelineCoordinates::setTraceRange(TimeNs traceStart, TimeNs traceEnd)
{
    const bool wasFit = isFullyZoomedOut();
    m_traceStart = traceStart;
    // An empty trace still gets a non-empty range, so every mapping stays finite.
    m_traceEnd = std::max(traceEnd, traceStart + static_cast<TimeNs>(kMinSpanNs));
    if (wasFit) {
        zoomToFit();
    } else {
        clamp();
    }
}

void TimelineCoordinates::setWidth(double widthPx)
{
    m_widthPx = std::max(1.0, widthPx);
}

bool TimelineCoordinates::isFullyZoomedOut() const
{
    const double full = static_cast<double>(m_traceEnd - m_traceStart);
    return m_span >= full - 0.5 && m_viewStart <= static_cast<double>(m_traceStart) + 0.5;
}

void TimelineCoordinates::zoomToFit()
{
    m_viewStart = static_cast<double>(m_traceStart);
    m_span = static_cast<double>(m_traceEnd - m_traceStart);
}

void TimelineCoordinates::setView(double startNs, double endNs)
{
    if (endNs < startNs) {
        std::swap(startNs, endNs);
    }
    m_viewStart = startNs;
    m_span = endNs - startNs;
    clamp();
}

void TimelineCoordinates::zoomAround(double anchorPx, double factor)
{
    if (!(factor > 0.0) || !std::isfinite(factor)) {
        return;
    }
    const double anchorTime = toTime(anchorPx);
    const double full = static_cast<double>(m_traceEnd - m_traceStart);
    const double newSpan = std::clamp(m_span / factor, std::min(kMinSpanNs, full), full);
    // Keep anchorTime under anchorPx: anchorTime = start + anchorPx * newSpan / width.
    m_viewStart = anchorTime - anchorPx * newSpan / m_widthPx;
    m_span = newSpan;
    clamp();
}

void TimelineCoordinates::panByPx(double dxPx)
{
    m_viewStart -= dxPx * nsPerPx();
    clamp();
}

void TimelineCoordinates::clamp()
{
    const double lo = static_cast<double>(m_traceStart);
    const double full = static_cast<double>(m_traceEnd - m_traceStart);
    m_span = std::clamp(m_span, std::min(kMinSpanNs, full), full);
    // Edge behaviour: the window never leaves the trace; a window as wide as the trace sits at its start.
    m_viewStart = std::clamp(m_viewStart, lo, lo + full - m_span);
}

} // namespace bs::ui
