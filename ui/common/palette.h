#pragma once
// The colours of the product, in one place. Action colours follow the PyTorch pipelining
// visualiser (F blue, I teal, W green, B orange) so screenshots read the same; U is grey-purple.
// Bubbles are mid tints, one colour per cause used everywhere (timeline, key, charts).

#include "ui/common/color_role.h"

#include <QColor>
#include <QRectF>
#include <QString>

class QPainter;

namespace bs::ui {

QColor roleColor(ColorRole role);
/// Short legend text: "F forward", "bubble: warm-up", ...
QString roleName(ColorRole role);
/// Text colour readable on top of roleColor(role).
QColor roleTextColor(ColorRole role);

/// A rank holding several stages (chunks): chunk 0 in the role's colour, each later chunk a
/// darker shade; odd chunks are also hatched (chunkHatched), so chunks read apart without colour.
QColor chunkColor(ColorRole role, int chunk);
bool chunkHatched(int chunk);
/// Fills `rect` the way the timeline draws `role` on chunk `chunk` (shade, then hatch).
void paintChunkSwatch(QPainter& painter, const QRectF& rect, ColorRole role, int chunk);

/// The one colour of a bubble cause: roleColor() of its role, the charts' bars and the key.
QColor bubbleCauseColor(profiler::BubbleCause cause);
QString bubbleCauseLabel(profiler::BubbleCause cause);

/// The colour of the `index`-th run in charts that draw one line per run (loss, drift,
/// throughput): distinct hues, none of them a bubble cause's, repeating after eight.
QColor runColor(int index);

namespace palette {
inline QColor background()
{
    return QColor(0xfb, 0xfb, 0xfc);
}
inline QColor laneBand()
{
    return QColor(0xf1, 0xf3, 0xf6);
}
inline QColor gridLine()
{
    return QColor(0xdd, 0xe1, 0xe7);
}
inline QColor text()
{
    return QColor(0x1f, 0x29, 0x37);
}
inline QColor mutedText()
{
    return QColor(0x6b, 0x72, 0x80);
}
inline QColor accent()
{
    return QColor(0x25, 0x63, 0xeb);
}
inline QColor budgetLine()
{
    return QColor(0xdc, 0x26, 0x26);
}
} // namespace palette

} // namespace bs::ui
