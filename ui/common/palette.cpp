#include "ui/common/palette.h"

#include <QBrush>
#include <QCoreApplication>
#include <QPainter>

#include <algorithm>
#include <iterator>

namespace bs::ui {

namespace {
profiler::BubbleCause causeOfRole(ColorRole role)
{
    switch (role) {
    case ColorRole::BubbleWarmUp:
        return profiler::BubbleCause::WarmUp;
    case ColorRole::BubbleDrain:
        return profiler::BubbleCause::Drain;
    case ColorRole::BubbleFlush:
        return profiler::BubbleCause::Flush;
    case ColorRole::BubbleComm:
        return profiler::BubbleCause::Comm;
    default:
        return profiler::BubbleCause::Dependency;
    }
}
} // namespace

QColor roleColor(ColorRole role)
{
    switch (role) {
    case ColorRole::Forward:
        return QColor(0x3b, 0x7d, 0xdd); // blue
    case ColorRole::Backward:
        return QColor(0xf2, 0x8e, 0x2b); // orange
    case ColorRole::BackwardInput:
        return QColor(0x17, 0xa2, 0x9a); // teal
    case ColorRole::BackwardWeight:
        return QColor(0x3f, 0xa3, 0x4d); // green
    case ColorRole::Update:
        return QColor(0x8a, 0x7f, 0xa8); // grey-purple
    case ColorRole::Send:
        return QColor(0x9c, 0xa3, 0xaf);
    case ColorRole::Kernel:
        return QColor(0x64, 0x74, 0x8b);
    case ColorRole::Marker:
        return QColor(0xdc, 0x26, 0x26);
    case ColorRole::BubbleWarmUp:
    case ColorRole::BubbleDrain:
    case ColorRole::BubbleFlush:
    case ColorRole::BubbleDependency:
    case ColorRole::BubbleComm:
        return bubbleCauseColor(causeOfRole(role));
    }
    return Qt::magenta;
}

QColor roleTextColor(ColorRole role)
{
    return isBubbleRole(role) ? palette::text() : QColor(Qt::white);
}

QColor chunkColor(ColorRole role, int chunk)
{
    const QColor base = roleColor(role);
    if (chunk <= 0 || isBubbleRole(role)) {
        return base;
    }
    // 100 %, 150 %, 120 %, 180 % darker, then repeating: neighbouring chunks differ most.
    static constexpr int kDarker[] = {100, 150, 120, 180};
    return base.darker(kDarker[chunk % 4]);
}

bool chunkHatched(int chunk)
{
    return chunk % 2 == 1;
}

void paintChunkSwatch(QPainter& painter, const QRectF& rect, ColorRole role, int chunk)
{
    painter.fillRect(rect, chunkColor(role, chunk));
    if (chunk > 0 && chunkHatched(chunk) && !isBubbleRole(role)) {
        painter.fillRect(rect, QBrush(QColor(255, 255, 255, 80), Qt::BDiagPattern));
    }
}

QString roleName(ColorRole role)
{
    switch (role) {
    case ColorRole::Forward:
        return QCoreApplication::translate("bs::ui", "F forward");
    case ColorRole::Backward:
        return QCoreApplication::translate("bs::ui", "B backward");
    case ColorRole::BackwardInput:
        return QCoreApplication::translate("bs::ui", "I input-grad");
    case ColorRole::BackwardWeight:
        return QCoreApplication::translate("bs::ui", "W weight-grad");
    case ColorRole::Update:
        return QCoreApplication::translate("bs::ui", "U update");
    case ColorRole::Send:
        return QCoreApplication::translate("bs::ui", "send");
    case ColorRole::Kernel:
        return QCoreApplication::translate("bs::ui", "kernel");
    case ColorRole::Marker:
        return QCoreApplication::translate("bs::ui", "marker");
    case ColorRole::BubbleWarmUp:
        return bubbleCauseLabel(profiler::BubbleCause::WarmUp);
    case ColorRole::BubbleDrain:
        return bubbleCauseLabel(profiler::BubbleCause::Drain);
    case ColorRole::BubbleFlush:
        return bubbleCauseLabel(profiler::BubbleCause::Flush);
    case ColorRole::BubbleDependency:
        return bubbleCauseLabel(profiler::BubbleCause::Dependency);
    case ColorRole::BubbleComm:
        return bubbleCauseLabel(profiler::BubbleCause::Comm);
    }
    return {};
}

QColor bubbleCauseColor(profiler::BubbleCause cause)
{
    // One colour per cause, the same in the timeline, its key and the charts: mid tints, light
    // enough to sit in the timeline's gaps beside the work, strong enough to read as chart bars.
    // Flush (avoidable) is the strongest.
    switch (cause) {
    case profiler::BubbleCause::WarmUp:
        return QColor(0xf5, 0xa3, 0xa9); // rose
    case profiler::BubbleCause::Drain:
        return QColor(0xf6, 0xcb, 0x6e); // amber
    case profiler::BubbleCause::Flush:
        return QColor(0xdc, 0x5a, 0x5e); // red: avoidable
    case profiler::BubbleCause::Dependency:
        return QColor(0xc4, 0xc9, 0xd2); // grey
    case profiler::BubbleCause::Comm:
        return QColor(0x93, 0xc1, 0xf9); // blue
    }
    return Qt::magenta;
}

QColor runColor(int index)
{
    static const QColor kRuns[] = {QColor(0x25, 0x63, 0xeb), QColor(0xea, 0x58, 0x0c), QColor(0x16, 0xa3, 0x4a),
        QColor(0x93, 0x33, 0xea), QColor(0x0d, 0x94, 0x88), QColor(0xa1, 0x62, 0x07), QColor(0xdb, 0x27, 0x77),
        QColor(0x4b, 0x55, 0x63)};
    return kRuns[static_cast<std::size_t>(std::max(0, index)) % std::size(kRuns)];
}

QString bubbleCauseLabel(profiler::BubbleCause cause)
{
    switch (cause) {
    case profiler::BubbleCause::WarmUp:
        return QCoreApplication::translate("bs::ui", "warm-up");
    case profiler::BubbleCause::Drain:
        return QCoreApplication::translate("bs::ui", "drain");
    case profiler::BubbleCause::Flush:
        return QCoreApplication::translate("bs::ui", "flush");
    case profiler::BubbleCause::Dependency:
        return QCoreApplication::translate("bs::ui", "dependency");
    case profiler::BubbleCause::Comm:
        return QCoreApplication::translate("bs::ui", "communication");
    }
    return {};
}

} // namespace bs::ui
