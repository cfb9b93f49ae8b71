#include "ui/timeline/timeline_zoom.h"

#include <algorithm>

namespace bs::ui {

TimelineZoom::TimelineZoom(QObject* parent)
    : QObject(parent)
{}

TimelineCoordinates TimelineZoom::coordinatesFor(double widthPx) const
{
    TimelineCoordinates c = m_coords;
    c.setWidth(widthPx);
    return c;
}

void TimelineZoom::includeRange(TimeNs start, TimeNs end)
{
    const TimeNs lo = m_hasRange ? std::min(start, m_coords.traceStart()) : start;
    const TimeNs hi = m_hasRange ? std::max(end, m_coords.traceEnd()) : end;
    if (m_hasRange && lo == m_coords.traceStart() && hi == m_coords.traceEnd()) {
        return;
    }
    const bool first = !m_hasRange;
    m_hasRange = true;
    m_coords.setTraceRange(lo, hi);
    if (first) {
        m_coords.zoomToFit();
    }
    Q_EMIT viewChanged();
}

void TimelineZoom::resetRange(TimeNs start, TimeNs end)
{
    m_hasRange = true;
    m_coords.setTraceRange(start, end);
    m_coords.zoomToFit();
    Q_EMIT viewChanged();
}

void TimelineZoom::zoomAround(double anchorPx, double factor, double widthPx)
{
    m_coords.setWidth(widthPx);
    m_coords.zoomAround(anchorPx, factor);
    Q_EMIT viewChanged();
}

void TimelineZoom::panByPx(double dxPx, double widthPx)
{
    m_coords.setWidth(widthPx);
    m_coords.panByPx(dxPx);
    Q_EMIT viewChanged();
}

void TimelineZoom::setView(double startNs, double endNs)
{
    m_coords.setView(startNs, endNs);
    Q_EMIT viewChanged();
}

void TimelineZoom::zoomToFit()
{
    m_coords.zoomToFit();
    Q_EMIT viewChanged();
}

} // namespace bs::ui
