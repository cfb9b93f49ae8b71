#include "ui/timeline/timeline_legend.h"

#include "ui/common/palette.h"

#include <QPainter>

namespace bs::ui {

namespace {
constexpr int kSwatchPx = 11;
constexpr int kSpacingPx = 14;
} // namespace

TimelineLegend::TimelineLegend(QWidget* parent)
    : QWidget(parent)
{
    setRoles({ColorRole::Forward, ColorRole::Backward, ColorRole::BackwardInput, ColorRole::BackwardWeight,
        ColorRole::Update, ColorRole::BubbleWarmUp, ColorRole::BubbleDrain, ColorRole::BubbleFlush,
        ColorRole::BubbleDependency, ColorRole::BubbleComm});
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void TimelineLegend::setRoles(std::vector<ColorRole> roles)
{
    m_roles = std::move(roles);
    updateGeometry();
    update();
}

QSize TimelineLegend::sizeHint() const
{
    int w = 0;
    for (ColorRole r : m_roles) {
        w += kSwatchPx + 4 + fontMetrics().horizontalAdvance(roleName(r)) + kSpacingPx;
    }
    return {w, fontMetrics().height() + 4};
}

void TimelineLegend::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    int x = 0;
    const int cy = height() / 2;
    bool bubblesStarted = false;
    for (ColorRole r : m_roles) {
        if (isBubbleRole(r) && !bubblesStarted) {
            bubblesStarted = true;
            p.setPen(palette::mutedText());
            const QString label = tr("bubbles:");
            p.drawText(QRect(x, 0, 200, height()), Qt::AlignVCenter | Qt::AlignLeft, label);
            x += fontMetrics().horizontalAdvance(label) + 6;
        }
        const QRect swatch(x, cy - kSwatchPx / 2, kSwatchPx, kSwatchPx);
        p.fillRect(swatch, roleColor(r));
        if (isBubbleRole(r)) {
            p.setPen(palette::gridLine());
            p.drawRect(swatch.adjusted(0, 0, -1, -1));
        }
        x += kSwatchPx + 4;
        const QString name = roleName(r);
        p.setPen(palette::text());
        const int w = fontMetrics().horizontalAdvance(name);
        p.drawText(QRect(x, 0, w + 2, height()), Qt::AlignVCenter | Qt::AlignLeft, name);
        x += w + kSpacingPx;
    }
}

} // namespace bs::ui
