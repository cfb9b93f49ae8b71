// The multi-process rank driver's session side: driveRank() (runtime/plan/sim/rank_driver.h) runs this
// rank's stage (or its v stages); its links move tensors to and from stages on other ranks
// through the StageTransport and its batches are recorded when all its stages have finished them.
#include "runtime/plan/sim/rank_driver.h"
#include "runtime/train/exec/session_state.h"
#include "runtime/train/exec/stage_transport.h"

#include <cmath>

namespace bs::runtime {

// Before an action that needs a neighbour's tensor the rank receives it (blocking, the transport's
// timeout); after one that produces a tensor for a neighbour it starts sending it. The static order
// is the one the serial driver executes, so the numerics are the same.
Status RunSession::Impl::runRank(int count, const Schedule& schedule, TensorExecutor& executor)
{
    StageTransport& net = *options.transport;
    const int rank = net.rank();
    const int stages = schedule.stages();
    const int last = stages - 1;
    const int v = schedule.stagesPerRank();
    if (!schedule.onePerRank() && net.handOffForm() == HandOffForm::Tensor) {
        // NCCL delivers in issue order per neighbour pair and direction; a rank's v stages send and
        // receive interleaved micro-batches (and a V placement sends activations both ways).
        return makeError(ErrorCode::InvalidArgument,
            "'" + schedule.params.name + "' places " + std::to_string(v)
                + " stages on each rank: multi-process runs of it need the Gloo transport",
            "--backend gloo");
    }
    // The message key: the micro-batch where every rank holds one stage (tags unchanged), else the
    // micro-batch and the receiving stage, since two ranks exchange tensors for several stage pairs.
    const auto key = [&](std::int64_t mb, int toStage) { return schedule.onePerRank() ? mb : mb * stages + toStage; };
    const int firstStep = stepsDone;
    const std::int64_t offset = mbDone;
    const std::vector<std::int64_t> shape{
        config.pipeline.microBatchSize, config.model.shape.seqLen, config.model.shape.dModel};
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
        Result<HandOff> in = net.recv(kindOf(a), schedule.rankOf(from), key(mb, a.stage), shape);
        if (!in) {
            return in.error();
        }
        model->putHandOff(kindOf(a), a.stage, mb, *in);
        return ok();
    };
    links.send = [&](const Action& a, int to) -> Status {
        const std::int64_t mb = offset + a.microbatch;
        std::optional<HandOff> value = model->takeHandOff(kindOf(a), to, mb, net.handOffForm());
        if (!value) {
            return makeError(ErrorCode::Internal, "the stage produced no tensor to send", toString(a));
        }
        return net.send(kindOf(a), schedule.rankOf(to), key(mb, to), std::move(*value));
    };
    links.recorded = [&](const Action& a, const profiler::TraceEvent& event) -> Status {
        device->placed(event); // GPU ranks: this action's kernels onto the wall clock
        if (a.kind != ActionKind::Backward && a.kind != ActionKind::BackwardWeight) {
            return ok();
        }
        const int n = a.microbatch / m();
        if (++done[static_cast<std::size_t>(n)] < m() * v) {
            return ok();
        }
        // Every stage of this rank finished batch n. Only the last stage's rank knows the losses. No
        // validation pass: it needs every stage's current weights, and a rank has its own.
        const Result<double> loss = schedule.rankOf(last) == rank
            ? batchLoss(offset + static_cast<std::int64_t>(n) * m())
            : Result<double>(NAN);
        if (!loss) {
            return loss.error();
        }
        return recordBatch(firstStep + n, *loss, event.end, wallStart, std::nullopt, false);
    };
    DriveOptions drive = driveOptions();
    auto stats = driveRank(schedule, rank, executor, store, drive, links);
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
