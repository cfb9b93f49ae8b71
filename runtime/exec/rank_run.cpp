// The multi-process rank driver: one stage per process, tensors through a StageTransport.
#include "runtime/exec/session_state.h"
#include "runtime/exec/stage_transport.h"
#include "runtime/sim/scheduler_core.h"

#include <cmath>

namespace bs::runtime {

// Multi-process: this rank performs its own stage's static program in order; before an action
// that needs a neighbour's tensor it receives it (blocking, the transport's timeout), after one
// that produces a tensor for a neighbour it starts sending it. The static order is the one the
// serial driver executes, so the numerics are the same.
Status RunSession::Impl::runRank(int count, const Schedule& schedule, TensorExecutor& executor)
{
    StageTransport& net = *options.transport;
    const int s = net.rank();
    const int last = schedule.stages() - 1;
    const int firstStep = stepsDone;
    const std::int64_t offset = mbDone;
    const std::vector<std::int64_t> shape{config.pipeline.microBatchSize, config.model.shape.seqLen,
                                          config.model.shape.dModel};
    const auto now = [&] {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - options.clockZero).count();
    };
    int version = versions.empty() ? 0 : versions[static_cast<std::size_t>(s)];
    std::vector<int> done(static_cast<std::size_t>(count), 0);
    const auto wallStart = Clock::now();
    Status status = ok();
    TimeNs lastEnd = now();
    for (const Action& a : schedule.programs[static_cast<std::size_t>(s)]) {
        if (stop) {
            status = makeError(ErrorCode::Cancelled, "run stopped", "rank " + std::to_string(s) + " before " + toString(a));
            break;
        }
        const std::int64_t mb = offset + a.microbatch;
        const bool gradientIn = (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardInput) && s < last;
        if ((a.kind == ActionKind::Forward && s > 0) || gradientIn) {
            const HandOffKind kind = gradientIn ? HandOffKind::Gradient : HandOffKind::Activation;
            Result<HandOff> in = net.recv(kind, gradientIn ? s + 1 : s - 1, mb, shape);
            if (!in) {
                status = in.error();
                break;
            }
            model->putHandOff(kind, s, mb, *in);
        }
        const TimeNs start = now();
        Result<ActionOutcome> outcome = executor.perform(a);
        const TimeNs end = now();
        if (!outcome) {
            Error e = outcome.error();
            e.context = "rank " + std::to_string(s) + ", " + toString(a) + (e.context.empty() ? "" : ": " + e.context);
            status = e;
            break;
        }
        const bool gradientOut = (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardInput) && s > 0;
        if ((a.kind == ActionKind::Forward && s < last) || gradientOut) {
            const HandOffKind kind = gradientOut ? HandOffKind::Gradient : HandOffKind::Activation;
            const int to = gradientOut ? s - 1 : s + 1;
            std::optional<HandOff> value = model->takeHandOff(kind, to, mb);
            if (!value) {
                status = makeError(ErrorCode::Internal, "the stage produced no tensor to send", toString(a));
                break;
            }
            if (Status sent = net.send(kind, to, mb, std::move(*value)); !sent) {
                status = sent;
                break;
            }
        }
        profiler::TraceEvent event;
        event.start = start;
        event.end = end;
        event.stage = static_cast<std::uint16_t>(s);
        event.kind = toEventKind(a.kind);
        event.microbatch = static_cast<std::int32_t>(mb);
        event.version = version;
        event.bytes = outcome->bytes;
        if (a.kind == ActionKind::Update) {
            event.aux = static_cast<std::uint16_t>(a.lastMb - a.firstMb + 1);
            ++version;
        }
        store.append(event);
        device->placed(event);
        lastEnd = end;
        if (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardWeight) {
            const int n = a.microbatch / m();
            if (++done[static_cast<std::size_t>(n)] == m()) { // this stage finished batch n
                double sum = 0.0;
                for (int i = 0; i < m(); ++i) {
                    sum += s == last ? model->loss(offset + static_cast<std::int64_t>(n) * m() + i).value_or(NAN)
                                     : NAN;
                }
                // No validation pass: it needs every stage's current weights, and a rank has one.
                if (Status r = recordBatch(firstStep + n, sum / m(), end, wallStart, std::nullopt, false); !r) {
                    status = r;
                    break;
                }
            }
        }
    }
    if (status) {
        status = net.flush();
    }
    trainWall += Clock::now() - wallStart;
    busy += executor.busyTime();
    if (!status) {
        return status;
    }
    virtualNow = lastEnd;
    if (versions.empty()) {
        versions.assign(static_cast<std::size_t>(schedule.stages()), 0);
    }
    versions[static_cast<std::size_t>(s)] = version;
    stepsDone += count;
    mbDone += static_cast<std::int64_t>(count) * m();
    return ok();
}

} // namespace bs::runtime
