#pragma once
// A one-line key of the timeline's colours: the action kinds, then the bubble causes.

#include "ui/common/color_role.h"

#include <QWidget>

#include <vector>

namespace bs::ui {

class TimelineLegend : public QWidget
{
    Q_OBJECT
public:
    explicit TimelineLegend(QWidget* parent = nullptr);
    /// Roles to show, in order (default: F B I W U, then every bubble cause).
    void setRoles(std::vector<ColorRole> roles);
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<ColorRole> m_roles;
};

} // namespace bs::ui
