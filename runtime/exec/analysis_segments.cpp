// analysisSegments(): the applied changes of a run as analysis segments. Torch-free and in
// bs_run_metrics, so the GUI (which reaches the training runtime only through its module) links it.
#include "runtime/exec/run_session.h"

#include "runtime/schedule/catalogue.h"

namespace bs::runtime {

std::vector<profiler::AnalysisOptions::Segment> analysisSegments(const std::vector<AppliedChange>& changes)
{
    std::vector<profiler::AnalysisOptions::Segment> out;
    for (const auto& change : changes) {
        const ScheduleInfo* info = findSchedule(change.settings.schedule);
        out.push_back({static_cast<int>(change.firstMicrobatch), change.settings.microbatches, !info || !info->asynchronous});
    }
    return out;
}

} // namespace bs::runtime
