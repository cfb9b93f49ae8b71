// The multi-process rank driver's session side: driveRank() (runtime/sim/rank_driver.h) runs this
// rank's stage; its links move tensors through the StageTransport and its batches are recorded
// when this stage has finished them.
#include "runtime/exec/session_state.h"
#include "runtime/exec/stage_transport.h"
#include "runtime/sim/rank_driver.h"

#include <cmath>

namespace bs::runtime {

// Before an action that needs a neighbour's tensor the rank receives it (blocking, the transport's
// timeout); after one that produces a tensor for a neighbour it starts sending it. The static order
// is the one the serial driver executes, so the numerics are the same.
Status RunSession::Impl::runRank(int count, const Schedule& schedule, TensorExecutor& executor)
{
    StageTransport& net = *options.transport;
    const int s = net.rank();
    const int last = schedule.stages() - 1;
    const int firstStep = stepsDone;
    const std::int64_t offset = mbDone;
    const std::vector<std::int64_t> shape{config.pipeline.microBatchSize, config.model.shape.seqLen,
                                          config.model.shape.dModel};
    const auto kindOf = [](const Action& a) {
        return a.kind == ActionKind::Forward ? HandOffKind::Activation : HandOffKind::Gradient;
    };
    std::vector<int> done(static_cast<std::size_t>(count), 0);
    const auto wallStart = Clock::now();
    RankLinks links;
    links.now = [&] {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - options.clockZero).count();
    };
    links.receive = [&](const Action& a, int from) -> Status {
        const std::int64_t mb = offset + a.microbatch;
        Result<HandOff> in = net.recv(kindOf(a), from, mb, shape);
        if (!in) {
            return in.error();
        }
        model->putHandOff(kindOf(a), s, mb, *in);
        return ok();
    };
    links.send = [&](const Action& a, int to) -> Status {
        const std::int64_t mb = offset + a.microbatch;
        std::optional<HandOff> value = model->takeHandOff(kindOf(a), to, mb, net.handOffForm());
        if (!value) {
            return makeError(ErrorCode::Internal, "the stage produced no tensor to send", toString(a));
        }
        return net.send(kindOf(a), to, mb, std::move(*value));
    };
    links.recorded = [&](const Action& a, const profiler::TraceEvent& event) -> Status {
        device->placed(event); // GPU ranks: this action's kernels onto the wall clock
        if (a.kind != ActionKind::Backward && a.kind != ActionKind::BackwardWeight) {
            return ok();
        }
        const int n = a.microbatch / m();
        if (++done[static_cast<std::size_t>(n)] < m()) {
            return ok();
        }
        // This stage finished batch n. Only the last stage knows the losses. No validation pass:
        // it needs every stage's current weights, and a rank has one.
        const Result<double> loss =
            s == last ? batchLoss(offset + static_cast<std::int64_t>(n) * m()) : Result<double>(NAN);
        if (!loss) {
            return loss.error();
        }
        return recordBatch(firstStep + n, *loss, event.end, wallStart, std::nullopt, false);
    };
    DriveOptions drive = driveOptions();
    auto stats = driveRank(schedule, s, executor, store, drive, links);
    Status status = stats ? net.flush() : Status(stats.error());
    trainWall += Clock::now() - wallStart;
    busy += executor.busyTime();
    if (!status) {
        return status;
    }
    virtualNow = stats->makespan;
    versions = stats->finalVersions;
    stepsDone += count;
    mbDone += static_cast<std::int64_t>(count) * m();
    return ok();
}

} // namespace bs::runtime
