#include "ui/common/color_role.h"

namespace bs::ui {

using profiler::BubbleCause;
using profiler::EventKind;

ColorRole roleOf(EventKind kind)
{
    switch (kind) {
    case EventKind::Forward:
        return ColorRole::Forward;
    case EventKind::Backward:
        return ColorRole::Backward;
    case EventKind::BackwardInput:
        return ColorRole::BackwardInput;
    case EventKind::BackwardWeight:
        return ColorRole::BackwardWeight;
    case EventKind::Update:
        return ColorRole::Update;
    case EventKind::Send:
        return ColorRole::Send;
    case EventKind::Kernel:
        return ColorRole::Kernel;
    case EventKind::Marker:
        return ColorRole::Marker;
    }
    return ColorRole::Marker;
}

ColorRole roleOf(BubbleCause cause)
{
    switch (cause) {
    case BubbleCause::WarmUp:
        return ColorRole::BubbleWarmUp;
    case BubbleCause::Drain:
        return ColorRole::BubbleDrain;
    case BubbleCause::Flush:
        return ColorRole::BubbleFlush;
    case BubbleCause::Dependency:
        return ColorRole::BubbleDependency;
    case BubbleCause::Comm:
        return ColorRole::BubbleComm;
    }
    return ColorRole::BubbleDependency;
}

bool isBubbleRole(ColorRole role)
{
    return role >= ColorRole::BubbleWarmUp;
}

} // namespace bs::ui
