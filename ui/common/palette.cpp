#include "ui/common/palette.h"

#include <QBrush>
#include <QCoreApplication>
#include <QPainter>

namespace bs::ui {

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
        return QColor(0xfd, 0xe2, 0xe2); // light rose
    case ColorRole::BubbleDrain:
        return QColor(0xfe, 0xf0, 0xc7); // light amber
    case ColorRole::BubbleFlush:
        return QColor(0xfc, 0xc8, 0xc8); // stronger rose: avoidable
    case ColorRole::BubbleDependency:
        return QColor(0xe5, 0xe7, 0xeb); // light grey
    case ColorRole::BubbleComm:
        return QColor(0xdb, 0xea, 0xfe); // light blue
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
    // Charts need stronger colours than the timeline's background tints.
    switch (cause) {
    case profiler::BubbleCause::WarmUp:
        return QColor(0xf4, 0x72, 0x7a);
    case profiler::BubbleCause::Drain:
        return QColor(0xf5, 0xb7, 0x40);
    case profiler::BubbleCause::Flush:
        return QColor(0xc0, 0x39, 0x2b);
    case profiler::BubbleCause::Dependency:
        return QColor(0x9c, 0xa3, 0xaf);
    case profiler::BubbleCause::Comm:
        return QColor(0x60, 0xa5, 0xfa);
    }
    return Qt::magenta;
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
