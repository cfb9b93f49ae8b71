#pragma once
// A panel of value controls inside a scroll area: the mouse wheel scrolls the panel. A slider,
// spin box or combo box under the pointer takes the wheel only once it has focus (clicked or
// tabbed to), so scrolling through the panel never changes a setting on the way.

class QAbstractScrollArea;
class QWidget;

namespace bs::ui {

/// Guards every slider, spin box and combo box inside `panel` (now and added later): a wheel
/// event over one without focus scrolls `scroll` instead. The guard is a child of `panel`.
void scrollPanelOnWheel(QWidget* panel, QAbstractScrollArea* scroll);

} // namespace bs::ui
