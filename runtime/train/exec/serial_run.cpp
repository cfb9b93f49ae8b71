// The serial driver: the scheduler core (drive()) performs every action on the calling thread on
// per-stage virtual clocks. runPipeline() also picks the driver of the session's options.
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/scheduler_core.h"
#include "runtime/train/exec/session_state.h"
#include "runtime/train/exec/stage_transport.h"

#include <algorithm>

namespace bs::runtime {

DriveOptions RunSession::Impl::driveOptions() const
{
    DriveOptions drive;
    drive.stop = &stop;
    drive.timeOrigin = virtualNow;
    drive.initialVersions = versions;
    drive.microbatchOffset = static_cast<std::int32_t>(mbDone);
    return drive;
}

Status RunSession::Impl::runPipeline(int count)
{
    ScheduleParams params = toScheduleParams(config);
    params.batches = count;
    auto schedule = makeSchedule(params);
    if (!schedule) {
        return schedule.error();
    }
    const int p = schedule->stages();
    const int firstStep = stepsDone;
    const std::int64_t firstMb = mbDone;
    TensorExecutor executor(*model, firstMb);
    executor.setTraceStages(schedule->rankOfStage);
    if (Status s = device->attach(executor); !s) {
        return s;
    }
    if (options.transport) {
        return runRank(count, *schedule, executor);
    }
    if (options.executor == ExecutorKind::Threaded) {
        return runThreaded(count, *schedule, executor);
    }
    // A global batch is recorded once EVERY stage has applied the update(s) covering it. Per-stage
    // action orders are static, so the weights at that point (and the validation loss measured on
    // them) do not depend on measured durations: same seed, same metrics.
    const int updatesPerBatch = std::max(1, m() / model->options().updateEvery);
    std::vector<int> updates(static_cast<std::size_t>(p), 0);
    int nextBatch = 0;
    Status callbackStatus = ok();
    const auto wallStart = Clock::now();
    DriveOptions drive = driveOptions();
    drive.cut = &cut;
    drive.cutEvery = m();
    drive.onAction = [&](const Action& a, const profiler::TraceEvent& ev) {
        device->placed(ev); // GPU runs: this action's kernels onto the virtual clock
        if (a.kind != ActionKind::Update) {
            return;
        }
        updates[static_cast<std::size_t>(a.stage)] += 1;
        const int slowest = *std::min_element(updates.begin(), updates.end());
        while (nextBatch < count && slowest >= (nextBatch + 1) * updatesPerBatch) {
            const Result<double> loss = batchLoss(firstMb + static_cast<std::int64_t>(nextBatch) * m());
            Status s = loss ? recordBatch(firstStep + nextBatch, *loss, ev.end, wallStart) : Status(loss.error());
            if (!s && callbackStatus) {
                callbackStatus = s;
            }
            ++nextBatch;
        }
    };
    auto stats = runtime::drive(*schedule, executor, store, drive);
    trainWall += Clock::now() - wallStart;
    busy += executor.busyTime();
    if (!stats) {
        return stats.error();
    }
    virtualNow += stats->makespan;
    versions = stats->finalVersions;
    const int done = stats->cutAt >= 0 ? stats->cutAt / m() : count; // a cut (Apply) ends at a batch boundary
    stepsDone += done;
    mbDone += static_cast<std::int64_t>(done) * m();
    return callbackStatus;
}

} // namespace bs::runtime
