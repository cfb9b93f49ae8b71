#include "profiler/import/action_labels_p.h"

#include <charconv>
#include <utility>

namespace bs::profiler::kineto::detail {

std::optional<int> parseInt(std::string_view s)
{
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < 0) {
        return std::nullopt;
    }
    return v;
}

/// "PP:3F12", "PP:0SEND_F1", "PP:2RECV_B0", ... (PyTorch's _Action repr).
std::optional<Label> parsePipelineLabel(std::string_view name)
{
    if (!startsWith(name, "PP:")) {
        return std::nullopt;
    }
    name.remove_prefix(3);
    std::size_t digits = 0;
    while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') {
        ++digits;
    }
    const std::optional<int> stage = parseInt(name.substr(0, digits));
    if (!stage) {
        return std::nullopt;
    }
    name.remove_prefix(digits);
    static constexpr std::pair<std::string_view, LabelKind> kComm[] = {{"SEND_F", LabelKind::SendF},
        {"RECV_F", LabelKind::RecvF}, {"SEND_B", LabelKind::SendB}, {"RECV_B", LabelKind::RecvB}};
    Label label;
    label.stage = *stage;
    for (const auto& [prefix, what] : kComm) {
        if (startsWith(name, prefix)) {
            const std::optional<int> mb = parseInt(name.substr(prefix.size()));
            if (!mb) {
                return std::nullopt;
            }
            label.what = what;
            label.microbatch = *mb;
            return label;
        }
    }
    if (name.empty()) {
        return std::nullopt;
    }
    const char letter = name.front();
    const std::optional<int> mb = parseInt(name.substr(1));
    if (!mb) {
        label.what = LabelKind::Other; // UNSHARD, RESHARD, REDUCE_GRAD
        return label;
    }
    label.microbatch = *mb;
    label.what = LabelKind::Compute;
    switch (letter) {
    case 'F':
        label.kind = EventKind::Forward;
        return label;
    case 'B':
        label.kind = EventKind::Backward;
        return label;
    case 'I':
        label.kind = EventKind::BackwardInput;
        return label;
    case 'W':
        label.kind = EventKind::BackwardWeight;
        return label;
    default:
        return std::nullopt;
    }
}

/// "Forward 3" / "Backward 3" (ScheduleGPipe).
std::optional<Label> parseGPipeLabel(std::string_view name, int stage)
{
    Label label;
    label.stage = stage;
    label.what = LabelKind::Compute;
    if (startsWith(name, "Forward ")) {
        label.kind = EventKind::Forward;
        name.remove_prefix(8);
    } else if (startsWith(name, "Backward ")) {
        label.kind = EventKind::Backward;
        name.remove_prefix(9);
    } else {
        return std::nullopt;
    }
    const std::optional<int> mb = parseInt(name);
    if (!mb) {
        return std::nullopt;
    }
    label.microbatch = *mb;
    return label;
}

} // namespace bs::profiler::kineto::detail
