#pragma once
// Zoom and pan state shared by every timeline that shows the same time axis (the comparison view
// aligns two runs on one axis by giving both views one TimelineZoom). Qt because it signals.

#include "ui/timeline/coordinates.h"

#include <QObject>

namespace bs::ui {

class TimelineZoom : public QObject
{
    Q_OBJECT
public:
    explicit TimelineZoom(QObject* parent = nullptr);

    /// The window as coordinates for a view whose event area is `widthPx` wide.
    TimelineCoordinates coordinatesFor(double widthPx) const;
    const TimelineCoordinates& coordinates() const { return m_coords; }

    /// Widens the trace range to include [start, end] (views call it when their data changes).
    /// A fully zoomed-out view stays fully zoomed out as a live trace grows.
    void includeRange(TimeNs start, TimeNs end);
    /// Sets the trace range exactly (drops ranges of traces no longer shown) and zooms to fit.
    void resetRange(TimeNs start, TimeNs end);
    /// Forgets the trace range (no trace shown): the next includeRange() fits its own.
    void clearRange() { m_hasRange = false; }

    void zoomAround(double anchorPx, double factor, double widthPx);
    void panByPx(double dxPx, double widthPx);
    void setView(double startNs, double endNs);
    void zoomToFit();

Q_SIGNALS:
    /// The visible window or the trace range changed.
    void viewChanged();

private:
    TimelineCoordinates m_coords;
    bool m_hasRange = false;
};

} // namespace bs::ui
