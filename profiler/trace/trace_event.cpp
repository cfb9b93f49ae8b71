#include "profiler/trace/trace_event.h"

namespace bs::profiler {

char eventLetter(EventKind kind)
{
    switch (kind) {
    case EventKind::Forward: return 'F';
    case EventKind::Backward: return 'B';
    case EventKind::BackwardInput: return 'I';
    case EventKind::BackwardWeight: return 'W';
    case EventKind::Update: return 'U';
    case EventKind::Send: return 'S';
    case EventKind::Kernel: return 'K';
    case EventKind::Marker: return 'M';
    }
    return '?';
}

std::string_view eventKindName(EventKind kind)
{
    switch (kind) {
    case EventKind::Forward: return "forward";
    case EventKind::Backward: return "backward";
    case EventKind::BackwardInput: return "backward-input";
    case EventKind::BackwardWeight: return "backward-weight";
    case EventKind::Update: return "update";
    case EventKind::Send: return "send";
    case EventKind::Kernel: return "kernel";
    case EventKind::Marker: return "marker";
    }
    return "unknown";
}

std::string_view laneName(Lane lane)
{
    switch (lane) {
    case Lane::Compute: return "compute";
    case Lane::Comm: return "comm";
    case Lane::Kernel: return "kernels";
    }
    return "unknown";
}

} // namespace bs::profiler
