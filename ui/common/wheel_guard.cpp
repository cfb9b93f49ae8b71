#include "ui/common/wheel_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QChildEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QPointer>
#include <QScrollBar>
#include <QWheelEvent>

namespace bs::ui {

namespace {

bool isValueControl(const QObject* o)
{
    return qobject_cast<const QAbstractSlider*>(o) != nullptr || qobject_cast<const QAbstractSpinBox*>(o) != nullptr
        || qobject_cast<const QComboBox*>(o) != nullptr;
}

class WheelGuard : public QObject
{
public:
    WheelGuard(QWidget* panel, QAbstractScrollArea* scroll)
        : QObject(panel)
        , m_scroll(scroll)
    {
        watch(panel);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        // ChildPolished, not ChildAdded: a widget is added from its base constructor, before it is
        // a slider; it is polished once whole (before it is first shown).
        if (event->type() == QEvent::ChildPolished) {
            if (auto* child = static_cast<QChildEvent*>(event)->child(); child->isWidgetType()) {
                watch(static_cast<QWidget*>(child));
            }
            return false;
        }
        if (event->type() != QEvent::Wheel || !isValueControl(watched) || !m_scroll) {
            return false;
        }
        auto* control = static_cast<QWidget*>(watched);
        if (control->hasFocus()) {
            return false; // focused: the wheel changes its value, as everywhere else
        }
        // The scroll bar takes the same event (a vertical wheel scrolls it by its single steps).
        QCoreApplication::sendEvent(m_scroll->verticalScrollBar(), event);
        return true;
    }

private:
    void watch(QWidget* widget)
    {
        widget->installEventFilter(this); // children added later are watched too (ChildPolished)
        if (isValueControl(widget)) {
            widget->setFocusPolicy(Qt::StrongFocus); // not Qt::WheelFocus: a wheel never focuses it
        }
        for (QObject* child : widget->children()) {
            if (child->isWidgetType()) {
                watch(static_cast<QWidget*>(child));
            }
        }
    }

    QPointer<QAbstractScrollArea> m_scroll;
};

} // namespace

void scrollPanelOnWheel(QWidget* panel, QAbstractScrollArea* scroll)
{
    new WheelGuard(panel, scroll);
}

} // namespace bs::ui
