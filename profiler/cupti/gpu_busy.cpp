#include "profiler/cupti/gpu_busy.h"

#include "profiler/analysis/analyze.h"
#include "profiler/cupti/activity_correlator.h"

#include <algorithm>
#include <tuple>

namespace bs::profiler::cupti {

namespace {

bool isComputeKind(std::uint16_t aux)
{
    return aux <= static_cast<std::uint16_t>(EventKind::Update);
}

bool sameAction(const TraceEvent& a, const TraceEvent& b)
{
    return a.kind == b.kind && a.microbatch == b.microbatch && a.version == b.version;
}

} // namespace

std::vector<TraceEvent> gpuComputeView(const std::vector<TraceEvent>& events, const GpuBusyOptions& options)
{
    std::vector<TraceEvent> kernels;
    std::vector<TraceEvent> view;
    for (const auto& e : events) {
        if (e.lane == Lane::Kernel && e.kind == EventKind::Kernel) {
            kernels.push_back(e);
        } else if (e.lane == Lane::Comm && e.kind == EventKind::Send) {
            view.push_back(e);
        }
    }
    std::stable_sort(kernels.begin(), kernels.end(), [](const TraceEvent& a, const TraceEvent& b) {
        return std::tie(a.stage, a.start) < std::tie(b.stage, b.start);
    });
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    std::size_t last = kNone; // index in view of the last busy interval of the current stage
    int stage = -1;
    TraceEvent owner;           // the action untagged kernels are attributed to
    bool haveOwner = false;
    for (const auto& k : kernels) {
        if (k.stage != stage) {
            stage = k.stage;
            last = kNone;
            haveOwner = false;
        }
        TraceEvent busy;
        if (isComputeKind(k.aux)) {
            busy.kind = static_cast<EventKind>(k.aux);
            busy.microbatch = k.microbatch;
            busy.version = k.version;
            owner = busy;
            haveOwner = true;
        } else if (haveOwner) {
            busy = owner;
        } else {
            continue;
        }
        busy.stage = k.stage;
        busy.lane = Lane::Compute;
        busy.start = last != kNone ? std::max(k.start, view[last].end) : k.start; // covered part is owned
        busy.end = k.end;
        if (busy.end <= busy.start) {
            continue;
        }
        if (last != kNone && sameAction(view[last], busy) && busy.start - view[last].end <= options.mergeGap) {
            view[last].end = busy.end;
            continue;
        }
        view.push_back(busy);
        last = view.size() - 1;
    }
    std::stable_sort(view.begin(), view.end(), [](const TraceEvent& a, const TraceEvent& b) {
        return std::tie(a.stage, a.start) < std::tie(b.stage, b.start);
    });
    return view;
}

Report analyzeGpu(const TraceSnapshot& trace, const AnalysisOptions& analysis, const GpuBusyOptions& options)
{
    const auto view = gpuComputeView(trace.toVector(), options);
    return analyze(*makeSnapshot(trace.meta(), view), analysis);
}

} // namespace bs::profiler::cupti
