// The threaded driver's session side: driveThreaded() runs one thread per stage on real clocks.
#include "runtime/plan/sim/threaded_driver.h"
#include "runtime/train/exec/session_state.h"

#include <algorithm>

namespace bs::runtime {

// driveThreaded: onAction runs on the stage threads (one at a time) while other stages keep
// computing, so it only notes when each batch completes; losses, stage statistics and the
// validation pass are read after the drive, when no stage runs.
Status RunSession::Impl::runThreaded(int count, const Schedule& schedule, TensorExecutor& executor)
{
    const int p = schedule.stages();
    const int firstStep = stepsDone;
    // One intra-op thread per stage unless configured: the stages are the parallelism.
    setIntraOpThreads(config.device.intraOpThreads > 0 ? config.device.intraOpThreads : 1);
    std::vector<int> done(static_cast<std::size_t>(count), 0);
    struct Completed
    {
        int batch;
        TimeNs end;
        Clock::time_point at;
    };
    std::vector<Completed> completed;
    const auto wallStart = Clock::now();
    DriveOptions drive = driveOptions();
    drive.onAction = [&](const Action& a, const profiler::TraceEvent& ev) {
        device->placed(ev);
        if (a.kind != ActionKind::Backward && a.kind != ActionKind::BackwardWeight) {
            return;
        }
        const int n = a.microbatch / m();
        if (++done[static_cast<std::size_t>(n)] == m() * p) {
            completed.push_back({n, ev.end, Clock::now()});
        }
    };
    auto stats = driveThreaded(schedule, executor, store, drive);
    const auto wallEnd = Clock::now();
    std::sort(
        completed.begin(), completed.end(), [](const Completed& x, const Completed& y) { return x.batch < y.batch; });
    bool evalDue = false;
    for (const Completed& c : completed) {
        evalDue = evalDue || evaluationDue(firstStep + c.batch);
    }
    Status recorded = ok();
    const Clock::duration evalBefore = evalWall; // the pass below runs after wallEnd: not in trainWall
    for (std::size_t i = 0; i < completed.size() && recorded; ++i) {
        const Completed& c = completed[i];
        const bool lastOfChunk = i + 1 == completed.size();
        const Result<double> loss = batchLoss(mbDone + static_cast<std::int64_t>(c.batch) * m());
        recorded = loss ? recordBatch(firstStep + c.batch, *loss, c.end, wallStart, c.at, lastOfChunk && evalDue)
                        : Status(loss.error());
    }
    evalWall = evalBefore;
    trainWall += wallEnd - wallStart;
    busy += executor.busyTime();
    if (!stats) {
        return stats.error();
    }
    virtualNow += stats->makespan;
    versions = stats->finalVersions;
    stepsDone += count;
    mbDone += static_cast<std::int64_t>(count) * m();
    return recorded;
}

} // namespace bs::runtime
