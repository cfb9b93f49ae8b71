#include "ui/timeline/timeline_legend.h"

#include "ui/common/palette.h"

#include <QPainter>

#include <algorithm>

namespace bs::ui {

namespace {
constexpr int kSwatchPx = 11;
constexpr int kSpacingPx = 14;
constexpr int kPrefixGapPx = 6;
} // namespace

TimelineLegend::TimelineLegend(QWidget* parent)
    : QWidget(parent)
{
    setRoles({ColorRole::Forward, ColorRole::Backward, ColorRole::BackwardInput, ColorRole::BackwardWeight,
        ColorRole::Update, ColorRole::BubbleWarmUp, ColorRole::BubbleDrain, ColorRole::BubbleFlush,
        ColorRole::BubbleDependency, ColorRole::BubbleComm});
    QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void TimelineLegend::setRoles(std::vector<ColorRole> roles)
{
    m_roles = std::move(roles);
    updateGeometry();
    update();
}

void TimelineLegend::setChunks(int stagesPerRank)
{
    const int chunks = std::max(1, stagesPerRank);
    if (chunks == m_chunks) {
        return;
    }
    m_chunks = chunks;
    updateGeometry();
    update();
}

std::vector<TimelineLegend::Entry> TimelineLegend::entries() const
{
    std::vector<Entry> out;
    bool bubblesStarted = false;
    for (ColorRole r : m_roles) {
        Entry e;
        e.role = r;
        e.name = roleName(r);
        if (isBubbleRole(r) && !bubblesStarted) {
            bubblesStarted = true;
            e.prefix = tr("bubbles:");
        }
        out.push_back(e);
    }
    for (int c = 0; m_chunks > 1 && c < m_chunks; ++c) {
        Entry e;
        e.chunk = c;
        e.name = tr("chunk %1").arg(c);
        e.prefix = c == 0 ? tr("per rank:") : QString();
        out.push_back(e);
    }
    return out;
}

int TimelineLegend::entryWidth(const Entry& entry) const
{
    const QFontMetrics fm = fontMetrics();
    const int prefix = entry.prefix.isEmpty() ? 0 : fm.horizontalAdvance(entry.prefix) + kPrefixGapPx;
    return prefix + kSwatchPx + 4 + fm.horizontalAdvance(entry.name) + 2;
}

int TimelineLegend::lineHeight() const
{
    return fontMetrics().height() + 4;
}

std::vector<QRect> TimelineLegend::entryRects(int width) const
{
    std::vector<QRect> rects;
    int x = 0;
    int y = 0;
    for (const Entry& e : entries()) {
        const int w = entryWidth(e);
        if (x > 0 && x + w > width) { // the next line, never cut at the edge
            x = 0;
            y += lineHeight();
        }
        rects.emplace_back(x, y, w, lineHeight());
        x += w + kSpacingPx;
    }
    return rects;
}

QSize TimelineLegend::sizeHint() const
{
    int w = 0;
    for (const Entry& e : entries()) {
        w += entryWidth(e) + kSpacingPx;
    }
    return {w, lineHeight()};
}

QSize TimelineLegend::minimumSizeHint() const
{
    int widest = 0;
    for (const Entry& e : entries()) {
        widest = std::max(widest, entryWidth(e));
    }
    return {widest, lineHeight()};
}

int TimelineLegend::heightForWidth(int width) const
{
    const auto rects = entryRects(std::max(1, width));
    return rects.empty() ? lineHeight() : rects.back().bottom() + 1;
}

void TimelineLegend::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const auto all = entries();
    const auto rects = entryRects(width());
    const QFontMetrics fm = fontMetrics();
    for (std::size_t i = 0; i < all.size(); ++i) {
        const Entry& e = all[i];
        const QRect& r = rects[i];
        int x = r.x();
        if (!e.prefix.isEmpty()) {
            p.setPen(palette::mutedText());
            p.drawText(QRect(x, r.y(), r.width(), r.height()), Qt::AlignVCenter | Qt::AlignLeft, e.prefix);
            x += fm.horizontalAdvance(e.prefix) + kPrefixGapPx;
        }
        const QRect swatch(x, r.center().y() - kSwatchPx / 2, kSwatchPx, kSwatchPx);
        if (e.chunk >= 0) {
            paintChunkSwatch(p, swatch, ColorRole::Forward, e.chunk);
        } else {
            p.fillRect(swatch, roleColor(e.role));
            if (isBubbleRole(e.role)) {
                p.setPen(palette::gridLine());
                p.drawRect(swatch.adjusted(0, 0, -1, -1));
            }
        }
        x += kSwatchPx + 4;
        p.setPen(palette::text());
        p.drawText(
            QRect(x, r.y(), fm.horizontalAdvance(e.name) + 2, r.height()), Qt::AlignVCenter | Qt::AlignLeft, e.name);
    }
}

} // namespace bs::ui
