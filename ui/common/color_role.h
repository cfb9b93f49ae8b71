#pragma once
// What a drawn interval means, independent of colours (pure C++, no Qt): the draw list speaks in
// roles, the palette (palette.h) turns them into colours.

#include "profiler/analysis/report.h"
#include "profiler/trace/trace_event.h"

#include <cstdint>

namespace bs::ui {

/// What a drawn interval means; the palette (ui/common/palette.h) maps it to a colour.
enum class ColorRole : std::uint8_t
{
    Forward,
    Backward,
    BackwardInput,
    BackwardWeight,
    Update,
    Send,
    Kernel,
    Marker,
    BubbleWarmUp,
    BubbleDrain,
    BubbleFlush,
    BubbleDependency,
    BubbleComm,
};
constexpr int kColorRoleCount = 13;

ColorRole roleOf(profiler::EventKind kind);
ColorRole roleOf(profiler::BubbleCause cause);
bool isBubbleRole(ColorRole role);

} // namespace bs::ui
