// The settings segments of a run after live Apply, for the analysis (flush only in synchronous
// segments, batches numbered across settings). Torch-free and outside the runtime module: the GUI's
// live index and the module's run summary both call it.
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/train/exec/run_session.h"

namespace bs::runtime {

std::vector<profiler::AnalysisOptions::Segment> analysisSegments(const std::vector<AppliedChange>& changes)
{
    std::vector<profiler::AnalysisOptions::Segment> out;
    for (const auto& change : changes) {
        const ScheduleInfo* info = findSchedule(change.config.schedule.name);
        out.push_back({static_cast<int>(change.firstMicrobatch), change.config.pipeline.microbatches,
            !info || !info->asynchronous});
    }
    return out;
}

} // namespace bs::runtime
