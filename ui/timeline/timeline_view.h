#pragma once
// The timeline widget: one lane per stage with compute/comm/kernel sub-lanes, bubbles tinted by
// cause, a time ruler. It only replays a DrawList built from a TimelineIndex for the current
// window; all geometry beyond row layout lives in coordinates.h and draw_list.h.
// Mouse: wheel zooms around the cursor, drag pans, drag on the ruler measures a range,
// double-click zooms to fit. Hover shows a tooltip (action, micro-batch, version, lag, times).

#include "ui/timeline/draw_list.h"
#include "ui/timeline/timeline_index.h"
#include "ui/timeline/timeline_zoom.h"

#include <QPointer>
#include <QWidget>

#include <memory>
#include <optional>

namespace bs::ui {

/// A vertical line across all rows at one time, with a label at the top (a live Apply's change).
struct TimelineMarker
{
    double timeNs = 0; ///< ns since the trace origin (the events' clock)
    QString label;
};

/// The trace's EventKind::Marker events as timeline markers; a marker's label is the trace
/// metadata attribute "marker.<microbatch>" (what RunSession writes for an Apply), else "marker".
std::vector<TimelineMarker> traceMarkers(const profiler::TraceSnapshot& trace);

class TimelineView : public QWidget
{
    Q_OBJECT
public:
    static constexpr int kGutterPx = 76; ///< stage labels
    static constexpr int kRulerPx = 22; ///< time ruler on top
    static constexpr int kRightPadPx = 10; ///< keeps the trace's last block off the widget edge

    explicit TimelineView(QWidget* parent = nullptr);
    ~TimelineView() override;

    /// Shows `index` (null clears). Widens the shared zoom's range to include it.
    void setIndex(std::shared_ptr<const TimelineIndex> index);
    const TimelineIndex* index() const { return m_index.get(); }
    /// Shares zoom/pan with other views (not owned). A view without one uses its own.
    void setZoom(TimelineZoom* zoom);
    TimelineZoom* zoom() const { return m_zoom; }
    void setShowRuler(bool show);
    void setDrawListParams(const DrawListParams& params) { m_params = params; }
    /// Markers painted over the events (replaces the previous ones; empty clears).
    void setMarkers(std::vector<TimelineMarker> markers);
    const std::vector<TimelineMarker>& markers() const { return m_markers; }

    /// Width of the event area in pixels (widget width minus the gutter).
    double eventAreaWidth() const;
    /// Row under widget y, if any.
    std::optional<std::size_t> rowAt(int y) const;
    /// Top and height of a row in widget pixels.
    QRect rowRect(std::size_t row) const;
    /// The tooltip text for widget position `pos` (empty when nothing is there). Public for tests.
    QString tooltipTextAt(const QPoint& pos) const;
    /// The gutter's name of lane `lane`: "stage 3"; "rank 1" where a rank holds several stages
    /// (the runtime's and the simulator's lane per rank); for an imported job's lane per stage,
    /// the rank that ran it ("rank 1", or "r1 · c0" for its first of several stages).
    QString laneLabel(int lane) const;
    /// The draw list of the last paint (for tests and benchmarks).
    const DrawList& lastDrawList() const { return m_drawList; }
    /// Builds the draw list for the current size and window and paints into `painter` (benchmarks).
    void paintTo(QPainter& painter);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    /// A range was measured on the ruler (ns since the trace origin).
    void rangeSelected(double startNs, double endNs);

protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    /// W/S or Up/Down (also +/−) zoom around the centre, A/D or Left/Right pan by a tenth of the
    /// view, Home or F fits the trace (the same keys as Perfetto and chrome://tracing).
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct RowGeometry
    {
        int y = 0;
        int height = 0;
    };
    void relayout();
    void paintBackground(QPainter& p) const;
    void paintRects(QPainter& p, const std::vector<DrawRect>& rects, bool labels) const;
    void paintRuler(QPainter& p) const;
    void paintSelection(QPainter& p) const;
    void paintGutter(QPainter& p) const;
    void paintMarkers(QPainter& p) const;
    /// Arrows from each visible send to its arrival on the receiver's row (zoomed in only).
    void paintTransferArrows(QPainter& p, const TimelineCoordinates& coords) const;

    std::shared_ptr<const TimelineIndex> m_index;
    QPointer<TimelineZoom> m_zoom;
    std::unique_ptr<TimelineZoom> m_ownZoom;
    DrawListParams m_params;
    DrawList m_drawList;
    std::vector<RowGeometry> m_rowGeometry;
    bool m_showRuler = true;
    std::vector<TimelineMarker> m_markers;
    // Interaction state.
    std::optional<QPoint> m_dragFrom;
    bool m_measuring = false;
    std::optional<std::pair<double, double>> m_selection; ///< ns
};

} // namespace bs::ui
