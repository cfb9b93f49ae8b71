#pragma once
// The labels torch.distributed.pipelining's traces carry, parsed (action_recovery.cpp reads them):
// "PP:3F12"-style record_function names and ScheduleGPipe's "Forward 3" / "Backward 3". Private
// to profiler/import.

#include "profiler/trace/trace_event.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace bs::profiler::kineto::detail {

enum class LabelKind : std::uint8_t
{
    Compute,
    SendF,
    RecvF,
    SendB,
    RecvB,
    Other
};

struct Label
{
    LabelKind what = LabelKind::Other;
    EventKind kind = EventKind::Forward;
    int stage = -1;
    int microbatch = -1;
    TimeNs start = 0, end = 0;
};

inline bool startsWith(std::string_view s, std::string_view prefix)
{
    return s.substr(0, prefix.size()) == prefix;
}

/// A non-negative decimal int filling all of `s` ("12"; not "-1", "1x" or ""), else nullopt.
std::optional<int> parseInt(std::string_view s);

/// "PP:3F12", "PP:0SEND_F1", "PP:2RECV_B0", ... (PyTorch's _Action repr); nullopt if not one.
std::optional<Label> parsePipelineLabel(std::string_view name);

/// "Forward 3" / "Backward 3" (ScheduleGPipe) on `stage`; nullopt if not one.
std::optional<Label> parseGPipeLabel(std::string_view name, int stage);

} // namespace bs::profiler::kineto::detail
