#pragma once
// The tag a runtime pushes around each action so that CUPTI can tie every kernel it records to the
// (stage, action, micro-batch, weight version) that launched it. The tag travels as CUPTI's 64-bit
// external correlation id, so it is packed losslessly into 64 bits.

#include "profiler/trace/trace_event.h"

#include <cstdint>
#include <optional>

namespace bs::profiler::cupti {

/// What was running on the host when a kernel was launched.
struct ActionTag
{
    int stage = 0;               ///< 0 .. kMaxStage
    EventKind kind = EventKind::Forward;
    int microbatch = -1;         ///< -1 .. kMaxMicrobatch (-1: not tied to a micro-batch)
    int version = 0;             ///< weight version; for kind == Send: the destination stage

    friend bool operator==(const ActionTag&, const ActionTag&) = default;
};

// Layout of the 64-bit id, most significant first:
//   [63:52] stage (12 bits) | [51:48] kind (4 bits) | [47:24] microbatch + 1 (24 bits) | [23:0] version (24 bits)
inline constexpr int kMaxStage = (1 << 12) - 1;
inline constexpr int kMaxMicrobatch = (1 << 24) - 2;
inline constexpr int kMaxVersion = (1 << 24) - 1;

/// The 64-bit external id for a tag; nullopt when a field is out of range (see the layout).
constexpr std::optional<std::uint64_t> packTag(const ActionTag& tag)
{
    const int kind = static_cast<int>(tag.kind);
    if (tag.stage < 0 || tag.stage > kMaxStage || kind >= kEventKindCount || tag.microbatch < -1
        || tag.microbatch > kMaxMicrobatch || tag.version < 0 || tag.version > kMaxVersion) {
        return std::nullopt;
    }
    return (static_cast<std::uint64_t>(tag.stage) << 52) | (static_cast<std::uint64_t>(kind) << 48)
         | (static_cast<std::uint64_t>(tag.microbatch + 1) << 24) | static_cast<std::uint64_t>(tag.version);
}

/// Inverse of packTag; nullopt when the kind bits name no EventKind (an id we did not push).
constexpr std::optional<ActionTag> unpackTag(std::uint64_t id)
{
    const auto kind = static_cast<int>((id >> 48) & 0xFu);
    if (kind >= kEventKindCount) {
        return std::nullopt;
    }
    ActionTag tag;
    tag.stage = static_cast<int>(id >> 52);
    tag.kind = static_cast<EventKind>(kind);
    tag.microbatch = static_cast<int>((id >> 24) & 0xFF'FFFFu) - 1;
    tag.version = static_cast<int>(id & 0xFF'FFFFu);
    return tag;
}

} // namespace bs::profiler::cupti
