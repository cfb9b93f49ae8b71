// TimelineView's input: tooltips, keys, wheel and mouse (zoom, pan, select); the painting and
// layout are in timeline_view.cpp.
#include "ui/timeline/timeline_view.h"
#include "ui/timeline/timeline_zoom.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <utility>

namespace bs::ui {

bool TimelineView::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(e);
        const QString text = tooltipTextAt(help->pos());
        if (text.isEmpty()) {
            QToolTip::hideText();
            e->ignore();
        } else {
            QToolTip::showText(help->globalPos(), text, this);
        }
        return true;
    }
    if (e->type() == QEvent::Resize) {
        relayout();
    }
    return QWidget::event(e);
}

void TimelineView::keyPressEvent(QKeyEvent* event)
{
    const double width = eventAreaWidth();
    switch (event->key()) {
    case Qt::Key_W:
    case Qt::Key_Up:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        m_zoom->zoomAround(width / 2, 1.25, width);
        break;
    case Qt::Key_S:
    case Qt::Key_Down:
    case Qt::Key_Minus:
        m_zoom->zoomAround(width / 2, 0.8, width);
        break;
    case Qt::Key_A:
    case Qt::Key_Left:
        m_zoom->panByPx(width / 10, width);
        break;
    case Qt::Key_D:
    case Qt::Key_Right:
        m_zoom->panByPx(-width / 10, width);
        break;
    case Qt::Key_Home:
    case Qt::Key_F:
        m_zoom->zoomToFit();
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

void TimelineView::wheelEvent(QWheelEvent* event)
{
    const double x = event->position().x() - kGutterPx;
    if (x < 0) {
        event->ignore();
        return;
    }
    const double factor = std::pow(1.0015, event->angleDelta().y());
    m_zoom->zoomAround(x, factor, eventAreaWidth());
    event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton) {
        return;
    }
    m_dragFrom = event->position().toPoint();
    m_measuring = m_showRuler && event->position().y() < kRulerPx;
    if (m_measuring) {
        const double t = m_zoom->coordinatesFor(eventAreaWidth()).toTime(event->position().x() - kGutterPx);
        m_selection = std::make_pair(t, t);
    }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event)
{
    if (!m_dragFrom || !(event->buttons() & Qt::LeftButton)) {
        return;
    }
    const QPoint pos = event->position().toPoint();
    if (m_measuring) {
        m_selection->second = m_zoom->coordinatesFor(eventAreaWidth()).toTime(pos.x() - kGutterPx);
        update();
    } else {
        m_zoom->panByPx(pos.x() - m_dragFrom->x(), eventAreaWidth());
        m_dragFrom = pos;
    }
}

void TimelineView::mouseReleaseEvent(QMouseEvent*)
{
    if (m_measuring && m_selection) {
        Q_EMIT rangeSelected(
            std::min(m_selection->first, m_selection->second), std::max(m_selection->first, m_selection->second));
    }
    m_dragFrom.reset();
    m_measuring = false;
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent*)
{
    m_selection.reset();
    m_zoom->zoomToFit();
}

} // namespace bs::ui
