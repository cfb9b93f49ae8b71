#include "ui/timeline/timeline_view.h"

#include "ui/common/format.h"
#include "ui/common/palette.h"
#include "ui/timeline/timeline_zoom.h"
#include "ui/timeline/transfer_arrows.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace bs::ui {

namespace {

constexpr int kStageGapPx = 4;
constexpr int kBottomPadPx = 4;

double laneWeight(profiler::Lane lane)
{
    switch (lane) {
    case profiler::Lane::Compute:
        return 1.0;
    case profiler::Lane::Comm:
        return 0.3;
    case profiler::Lane::Kernel:
        return 0.45;
    }
    return 1.0;
}

/// 1, 2 or 5 times a power of ten, so that ticks are at least `minPx` apart.
double niceStep(double nsPerPx, double minPx)
{
    const double raw = std::max(1.0, nsPerPx * minPx);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (m * magnitude >= raw) {
            return m * magnitude;
        }
    }
    return 10.0 * magnitude;
}

} // namespace

TimelineView::TimelineView(QWidget* parent)
    : QWidget(parent)
    , m_ownZoom(std::make_unique<TimelineZoom>())
{
    setZoom(m_ownZoom.get());
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::WheelFocus);
}

TimelineView::~TimelineView() = default;

void TimelineView::setZoom(TimelineZoom* zoom)
{
    if (m_zoom) {
        disconnect(m_zoom, nullptr, this, nullptr);
    }
    m_zoom = zoom ? zoom : m_ownZoom.get();
    connect(m_zoom, &TimelineZoom::viewChanged, this, qOverload<>(&QWidget::update));
    if (m_index && m_index->eventCount() > 0) {
        m_zoom->includeRange(m_index->startTime(), m_index->endTime());
    }
    update();
}

void TimelineView::setShowRuler(bool show)
{
    m_showRuler = show;
    relayout();
    update();
}

void TimelineView::setIndex(std::shared_ptr<const TimelineIndex> index)
{
    m_index = std::move(index);
    relayout();
    if (m_index && m_index->eventCount() > 0) {
        m_zoom->includeRange(m_index->startTime(), m_index->endTime());
    }
    updateGeometry();
    update();
}

QSize TimelineView::sizeHint() const
{
    const int stages = m_index ? std::max(1, m_index->stages()) : 8;
    return {900, (m_showRuler ? kRulerPx : 0) + stages * 26};
}

QSize TimelineView::minimumSizeHint() const
{
    return {kGutterPx + 100, (m_showRuler ? kRulerPx : 0) + 40};
}

double TimelineView::eventAreaWidth() const
{
    return std::max(1, width() - kGutterPx - kRightPadPx);
}

void TimelineView::relayout()
{
    m_rowGeometry.clear();
    if (!m_index) {
        return;
    }
    const auto& rows = m_index->rows();
    double totalWeight = 0;
    for (const auto& r : rows) {
        totalWeight += laneWeight(r.lane);
    }
    const int top = m_showRuler ? kRulerPx : 0;
    const int gaps = std::max(0, m_index->stages() - 1) * kStageGapPx;
    const double avail = std::max(10.0, static_cast<double>(height() - top - gaps - kBottomPadPx));
    // Lanes scale to the view: three timelines on a laptop screen leave ~110 px for 8 stages, and
    // a floor of 8 px a lane cut the last stages off.
    const double unit = std::clamp(totalWeight > 0 ? avail / totalWeight : 20.0, 2.0, 40.0);
    double y = top;
    int prevStage = rows.empty() ? 0 : rows.front().stage;
    for (const auto& r : rows) {
        if (r.stage != prevStage) {
            y += kStageGapPx;
            prevStage = r.stage;
        }
        const int h = std::max(1, static_cast<int>(std::floor(unit * laneWeight(r.lane))));
        m_rowGeometry.push_back({static_cast<int>(std::lround(y)), h});
        y += h;
    }
}

QRect TimelineView::rowRect(std::size_t row) const
{
    if (row >= m_rowGeometry.size()) {
        return {};
    }
    return {kGutterPx, m_rowGeometry[row].y, static_cast<int>(eventAreaWidth()), m_rowGeometry[row].height};
}

std::optional<std::size_t> TimelineView::rowAt(int y) const
{
    for (std::size_t r = 0; r < m_rowGeometry.size(); ++r) {
        if (y >= m_rowGeometry[r].y && y < m_rowGeometry[r].y + m_rowGeometry[r].height) {
            return r;
        }
    }
    return std::nullopt;
}

void TimelineView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    paintTo(p);
}

void TimelineView::paintTo(QPainter& p)
{
    if (m_rowGeometry.size() != (m_index ? m_index->rows().size() : 0)) {
        relayout();
    }
    paintBackground(p);
    if (m_index) {
        const TimelineCoordinates coords = m_zoom->coordinatesFor(eventAreaWidth());
        m_drawList = buildDrawList(*m_index, coords, m_params);
        p.save();
        p.setClipRect(QRect(kGutterPx, 0, static_cast<int>(eventAreaWidth()), height()));
        p.translate(kGutterPx, 0);
        paintRects(p, m_drawList.bubbles, false);
        paintRects(p, m_drawList.blocks, true);
        paintTransferArrows(p, coords);
        p.restore();
    } else {
        m_drawList = {};
    }
    paintGutter(p);
    if (m_showRuler) {
        paintRuler(p);
    }
    paintMarkers(p);
    paintSelection(p);
}

void TimelineView::setMarkers(std::vector<TimelineMarker> markers)
{
    m_markers = std::move(markers);
    update();
}

void TimelineView::paintMarkers(QPainter& p) const
{
    if (m_markers.empty() || !m_zoom) {
        return;
    }
    const double width = eventAreaWidth();
    const TimelineCoordinates coords = m_zoom->coordinatesFor(width);
    p.save();
    p.setClipRect(QRect(kGutterPx, 0, static_cast<int>(width), height()));
    QPen pen(palette::text());
    pen.setWidth(2);
    pen.setStyle(Qt::DashLine);
    const QFontMetrics fm(font());
    for (const TimelineMarker& m : m_markers) {
        const double x = kGutterPx + coords.toPx(m.timeNs);
        if (x < kGutterPx - 1 || x > kGutterPx + width + 1) {
            continue;
        }
        p.setPen(pen);
        p.drawLine(QPointF(x, 0), QPointF(x, height()));
        const QRectF box(x + 3, m_showRuler ? kRulerPx : 0, fm.horizontalAdvance(m.label) + 6, fm.height() + 2);
        p.fillRect(box, palette::background());
        p.setPen(palette::text());
        p.drawText(box, Qt::AlignCenter, m.label);
    }
    p.restore();
}

std::vector<TimelineMarker> traceMarkers(const profiler::TraceSnapshot& trace)
{
    std::vector<TimelineMarker> out;
    const auto& attributes = trace.meta().attributes;
    trace.forEach([&](const profiler::TraceEvent& e) {
        if (e.kind != profiler::EventKind::Marker) {
            return;
        }
        const auto it = attributes.find("marker." + std::to_string(e.microbatch));
        out.push_back({static_cast<double>(e.start),
                       it != attributes.end() ? QString::fromStdString(it->second) : QStringLiteral("marker")});
    });
    return out;
}

void TimelineView::paintBackground(QPainter& p) const
{
    p.fillRect(rect(), palette::background());
    for (std::size_t r = 0; r < m_rowGeometry.size(); ++r) {
        if (m_index->rows()[r].lane == profiler::Lane::Compute) {
            p.fillRect(rowRect(r), palette::laneBand());
        }
    }
    if (!m_index || m_index->eventCount() == 0) {
        p.setPen(palette::mutedText());
        p.drawText(rect().adjusted(kGutterPx, m_showRuler ? kRulerPx : 0, 0, 0), Qt::AlignCenter, tr("No events yet"));
    }
}

void TimelineView::paintRects(QPainter& p, const std::vector<DrawRect>& rects, bool labels) const
{
    const QFontMetrics fm(font());
    const int digitWidth = fm.horizontalAdvance(QLatin1Char('8'));
    for (const DrawRect& d : rects) {
        if (d.row >= m_rowGeometry.size()) {
            continue;
        }
        const RowGeometry& g = m_rowGeometry[d.row];
        const double w = std::max(1.0f, d.w);
        // Leave a 1 px seam between wide neighbouring blocks so consecutive actions stay distinct.
        const double seam = (labels && w >= 5.0) ? 1.0 : 0.0;
        const QRectF r(d.x, g.y, w - seam, g.height);
        QColor c = chunkColor(d.role, d.chunk); // a rank's chunks in shades (and hatches) of the role
        if (d.folded()) {
            c = c.darker(108);
        }
        p.fillRect(r, c);
        if (labels && chunkHatched(d.chunk) && !isBubbleRole(d.role)) {
            p.fillRect(r, QBrush(QColor(255, 255, 255, 80), Qt::BDiagPattern));
        }
        if (labels && d.label >= 0 && g.height >= fm.height() - 2) {
            const QString text = QString::number(d.label);
            if (r.width() >= static_cast<double>(digitWidth * text.size() + 4)) {
                p.setPen(roleTextColor(d.role));
                p.drawText(r, Qt::AlignCenter, text);
            }
        }
    }
}

void TimelineView::paintTransferArrows(QPainter& p, const TimelineCoordinates& coords) const
{
    const std::vector<TransferArrow> arrows = transferArrows(*m_index, coords);
    if (arrows.empty()) {
        return;
    }
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    QColor ink = palette::mutedText();
    ink.setAlpha(210);
    p.setPen(QPen(ink, 1.2));
    p.setBrush(ink);
    for (const TransferArrow& a : arrows) {
        if (a.fromRow >= m_rowGeometry.size() || a.toRow >= m_rowGeometry.size()) {
            continue;
        }
        const RowGeometry& from = m_rowGeometry[a.fromRow];
        const RowGeometry& to = m_rowGeometry[a.toRow];
        // Leave the sender's row at its middle, enter the receiver's row at its near edge.
        const QPointF tail(a.fromPx, from.y + from.height / 2.0);
        const QPointF head(a.toPx, to.y > from.y ? to.y : to.y + to.height);
        p.drawLine(tail, head);
        const QLineF shaft(head, tail);
        const double back = 5.0;
        const QLineF left = QLineF::fromPolar(back, shaft.angle() + 25).translated(head);
        const QLineF right = QLineF::fromPolar(back, shaft.angle() - 25).translated(head);
        p.drawPolygon(QPolygonF{head, left.p2(), right.p2()});
    }
    p.restore();
}

void TimelineView::paintGutter(QPainter& p) const
{
    p.fillRect(QRect(0, 0, kGutterPx, height()), palette::background());
    if (!m_index) {
        return;
    }
    p.setPen(palette::text());
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.8);
    const int smallHeight = QFontMetrics(small).height();
    int labelledTo = -1; // the bottom of the last lane name drawn: squeezed lanes skip names, never overlap them
    for (std::size_t r = 0; r < m_rowGeometry.size(); ++r) {
        const auto& row = m_index->rows()[r];
        const QRect area(6, m_rowGeometry[r].y, kGutterPx - 10, m_rowGeometry[r].height);
        if (row.lane == profiler::Lane::Compute) {
            const bool roomy = area.height() >= QFontMetrics(font()).height() - 2;
            const int h = roomy ? area.height() : smallHeight;
            const QRect text(area.x(), area.center().y() - h / 2, area.width(), h);
            if (text.top() <= labelledTo) {
                continue; // the gutter's tooltip names this lane
            }
            p.setFont(roomy ? font() : small);
            p.setPen(palette::text());
            p.drawText(text, Qt::AlignVCenter | Qt::AlignLeft, laneLabel(row.stage));
            labelledTo = text.bottom();
        } else if (m_rowGeometry[r].height >= 8) {
            p.setFont(small);
            p.setPen(palette::mutedText());
            p.drawText(area, Qt::AlignVCenter | Qt::AlignRight, toQt(profiler::laneName(row.lane)));
        }
    }
    p.setFont(font());
}

void TimelineView::paintRuler(QPainter& p) const
{
    const QRect ruler(0, 0, width(), kRulerPx);
    p.fillRect(ruler, palette::background());
    p.setPen(palette::gridLine());
    p.drawLine(kGutterPx, kRulerPx - 1, width(), kRulerPx - 1);
    const TimelineCoordinates c = m_zoom->coordinatesFor(eventAreaWidth());
    const double step = niceStep(c.nsPerPx(), 90.0);
    const double origin = static_cast<double>(c.traceStart());
    double t = origin + std::ceil((c.viewStart() - origin) / step) * step;
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.85);
    p.setFont(small);
    for (; t <= c.viewEnd(); t += step) {
        const double x = kGutterPx + c.toPx(t);
        p.setPen(palette::gridLine());
        p.drawLine(QPointF(x, kRulerPx - 6), QPointF(x, kRulerPx - 1));
        p.setPen(palette::mutedText());
        p.drawText(
            QRectF(x + 3, 0, 100, kRulerPx - 4), Qt::AlignLeft | Qt::AlignVCenter, formatTimeTick(t - origin, step));
    }
    p.setFont(font());
}

void TimelineView::paintSelection(QPainter& p) const
{
    if (!m_selection) {
        return;
    }
    const TimelineCoordinates c = m_zoom->coordinatesFor(eventAreaWidth());
    const double x0 = kGutterPx + c.toPx(m_selection->first);
    const double x1 = kGutterPx + c.toPx(m_selection->second);
    QColor fill = palette::accent();
    fill.setAlpha(40);
    const QRectF r(std::min(x0, x1), 0, std::fabs(x1 - x0), height());
    p.fillRect(r, fill);
    p.setPen(palette::accent());
    p.drawLine(QPointF(x0, 0), QPointF(x0, height()));
    p.drawLine(QPointF(x1, 0), QPointF(x1, height()));
    const QString text = formatDuration(std::fabs(m_selection->second - m_selection->first));
    p.fillRect(QRectF(r.center().x() - 40, 2, 80, kRulerPx - 4), palette::accent());
    p.setPen(Qt::white);
    p.drawText(QRectF(r.center().x() - 40, 2, 80, kRulerPx - 4), Qt::AlignCenter, text);
}

QString TimelineView::laneLabel(int lane) const
{
    if (!m_index) {
        return {};
    }
    if (const auto owner = m_index->laneOwner(lane)) {
        return owner->chunks > 1 ? tr("r%1 · c%2").arg(owner->rank).arg(owner->chunk) : tr("rank %1").arg(owner->rank);
    }
    // One lane per rank when a rank holds several stages (its chunks told apart by shade).
    return (m_index->stagesPerRank() > 1 ? tr("rank %1") : tr("stage %1")).arg(lane);
}

QString TimelineView::tooltipTextAt(const QPoint& pos) const
{
    if (m_index && pos.x() < kGutterPx) { // the gutter: the lane's name in words
        const auto row = rowAt(pos.y());
        if (!row) {
            return {};
        }
        const int lane = m_index->rows()[*row].stage;
        if (const auto owner = m_index->laneOwner(lane)) {
            return tr("model stage %1: rank %2, chunk %3 of %4")
                .arg(lane)
                .arg(owner->rank)
                .arg(owner->chunk)
                .arg(owner->chunks);
        }
        if (m_index->stagesPerRank() > 1) {
            QStringList held;
            for (int c = 0; c < m_index->stagesPerRank(); ++c) {
                const int stage = m_index->stageOfChunk(lane, c);
                held << (stage >= 0 ? tr("chunk %1 = stage %2").arg(c).arg(stage) : tr("chunk %1").arg(c));
            }
            return tr("rank %1: %2").arg(lane).arg(held.join(QStringLiteral(", ")));
        }
        return tr("stage %1").arg(lane);
    }
    if (!m_index || pos.x() < kGutterPx) {
        return {};
    }
    const auto row = rowAt(pos.y());
    if (!row) {
        return {};
    }
    const TimelineCoordinates c = m_zoom->coordinatesFor(eventAreaWidth());
    const double t = c.toTime(pos.x() - kGutterPx);
    const auto slack = static_cast<TimeNs>(c.nsPerPx() * 2);
    const auto stage = m_index->rows()[*row].stage;
    if (auto hit = m_index->hitEvent(*row, static_cast<TimeNs>(t), slack)) {
        const auto id = m_index->events(*row).source[*hit];
        const profiler::TraceEvent& e = (*m_index->snapshot())[id];
        QString name = QString::number(e.stage) + QLatin1Char(profiler::eventLetter(e.kind));
        if (e.kind != profiler::EventKind::Marker && e.kind != profiler::EventKind::Kernel) {
            name += QString::number(e.microbatch);
        }
        // Spelled out first ("stage 1, forward, micro-batch 2"); the compact 1F2 after it. On a
        // rank holding several stages: "rank 1, chunk 1 (stage 6), forward, ...".
        QString where = tr("stage %1").arg(e.stage);
        if (m_index->stagesPerRank() > 1) {
            where = tr("rank %1").arg(e.stage);
            if (e.lane == profiler::Lane::Compute && e.kind != profiler::EventKind::Update
                && e.kind != profiler::EventKind::Marker && e.kind != profiler::EventKind::Kernel) {
                const int chunk = m_index->chunkOf(e);
                const int modelStage = m_index->stageOfChunk(e.stage, chunk);
                where += modelStage >= 0 ? tr(", chunk %1 (stage %2)").arg(chunk).arg(modelStage)
                                         : tr(", chunk %1").arg(chunk);
            }
        }
        QString text = QStringLiteral("<b>") + where + QStringLiteral(", ") + toQt(profiler::eventKindName(e.kind));
        if (e.kind != profiler::EventKind::Marker && e.kind != profiler::EventKind::Kernel
            && e.kind != profiler::EventKind::Update) {
            text += tr(", micro-batch %1").arg(e.microbatch);
        }
        text += QStringLiteral("</b> <span style='color:#6b7280'>") + name + QStringLiteral("</span>");
        if (e.kind == profiler::EventKind::Update) {
            text += tr("<br>update %1 (applies %2 micro-batches)").arg(e.microbatch).arg(e.aux);
        } else if (e.kind != profiler::EventKind::Marker) {
            text += tr("<br>micro-batch %1").arg(e.microbatch);
        }
        text += tr("<br>weight version %1").arg(e.version);
        if (auto lag = m_index->versionLag(id)) {
            text += tr(", lag %1").arg(*lag);
        }
        text += tr("<br>start %1<br>duration %2")
                    .arg(formatDuration(static_cast<double>(e.start - m_index->startTime())),
                        formatDuration(static_cast<double>(e.duration())));
        if (e.bytes > 0) {
            text += tr("<br>%1").arg(formatBytes(static_cast<double>(e.bytes)));
        }
        return text;
    }
    if (auto hit = m_index->hitBubble(*row, static_cast<TimeNs>(t))) {
        const auto& b = m_index->bubbleSpans()[m_index->bubbles(*row).source[*hit]];
        return (m_index->stagesPerRank() > 1 ? tr("<b>bubble</b> on rank %1: %2<br>idle %3")
                                             : tr("<b>bubble</b> on stage %1: %2<br>idle %3"))
            .arg(stage)
            .arg(bubbleCauseLabel(b.cause), formatDuration(static_cast<double>(b.end - b.start)));
    }
    return {};
}

} // namespace bs::ui
