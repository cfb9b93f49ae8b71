#include "profiler/io/event_name.h"

#include <charconv>
#include <limits>

namespace bs::profiler {

std::string eventName(const TraceEvent& event)
{
    std::string name = "PP:";
    name += std::to_string(event.stage);
    name += eventLetter(event.kind);
    name += std::to_string(event.microbatch);
    return name;
}

std::optional<EventKind> eventKindFromLetter(char letter)
{
    for (int k = 0; k < kEventKindCount; ++k) {
        const auto kind = static_cast<EventKind>(k);
        if (eventLetter(kind) == letter) {
            return kind;
        }
    }
    return std::nullopt;
}

std::optional<ParsedEventName> parseEventName(std::string_view name)
{
    if (name.substr(0, 3) != "PP:") {
        return std::nullopt;
    }
    const char* p = name.data() + 3;
    const char* end = name.data() + name.size();
    ParsedEventName out;
    auto [afterStage, ec] = std::from_chars(p, end, out.stage);
    if (ec != std::errc() || afterStage == p || afterStage == end || out.stage < 0
        || out.stage > std::numeric_limits<std::uint16_t>::max()) {
        return std::nullopt;
    }
    const std::optional<EventKind> kind = eventKindFromLetter(*afterStage);
    if (!kind) {
        return std::nullopt;
    }
    out.kind = *kind;
    const char* mb = afterStage + 1;
    auto [afterMb, ec2] = std::from_chars(mb, end, out.microbatch);
    if (ec2 != std::errc() || afterMb != end || afterMb == mb) {
        return std::nullopt;
    }
    return out;
}

} // namespace bs::profiler
