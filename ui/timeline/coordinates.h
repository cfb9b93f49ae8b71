#pragma once
// Time <-> pixel mapping of the timeline under zoom and pan. Pure (no Qt), so it is tested as data
// (after qt-creator's timelinecoordinates.h). Times are ns since the trace origin; pixels are
// measured from the left edge of the event area (the stage-label gutter is the view's business).

#include "base/time.h"

namespace bs::ui {

class TimelineCoordinates
{
public:
    /// Narrowest visible window, so zooming in stops at a readable scale (ns).
    static constexpr double kMinSpanNs = 100.0;

    TimelineCoordinates() = default;
    /// A view of the whole trace range [traceStart, traceEnd] over `widthPx` pixels.
    TimelineCoordinates(TimeNs traceStart, TimeNs traceEnd, double widthPx);

    /// Replaces the trace range. Keeps the current view when it still lies inside the new range
    /// (a live trace growing at the end), otherwise zooms to fit.
    void setTraceRange(TimeNs traceStart, TimeNs traceEnd);
    void setWidth(double widthPx);

    /// Sets the visible window; clamped to the trace range and to at least kMinSpanNs.
    void setView(double startNs, double endNs);
    void zoomToFit();
    /// Zooms by `factor` (> 1 zooms in) keeping the time under pixel `anchorPx` where it is.
    void zoomAround(double anchorPx, double factor);
    /// Moves the window by `dxPx` pixels (positive: content moves right, i.e. earlier times show).
    void panByPx(double dxPx);

    TimeNs traceStart() const { return m_traceStart; }
    TimeNs traceEnd() const { return m_traceEnd; }
    double viewStart() const { return m_viewStart; }
    double viewEnd() const { return m_viewStart + m_span; }
    double span() const { return m_span; }
    double widthPx() const { return m_widthPx; }
    /// Nanoseconds one pixel covers at the current zoom (> 0 whenever widthPx > 0).
    double nsPerPx() const { return m_widthPx > 0 ? m_span / m_widthPx : 0.0; }
    /// True when the whole trace is visible.
    bool isFullyZoomedOut() const;

    /// Pixel of time t; may be outside [0, widthPx) for times outside the view (no clamping, so
    /// blocks that start left of the view keep their true length).
    double toPx(double timeNs) const { return (timeNs - m_viewStart) * m_widthPx / m_span; }
    /// Time at pixel x (inverse of toPx up to floating-point rounding).
    double toTime(double px) const { return m_viewStart + px * m_span / m_widthPx; }

private:
    void clamp();

    TimeNs m_traceStart = 0;
    TimeNs m_traceEnd = 1000;
    double m_widthPx = 1000.0;
    double m_viewStart = 0.0;
    double m_span = 1000.0; ///< ns, always >= kMinSpanNs
};

} // namespace bs::ui
