// The reference driver (--reference): plain non-pipelined training of the same micro-batches,
// one trace event per global batch.
#include "runtime/exec/session_state.h"

namespace bs::runtime {

Status RunSession::Impl::runReference(int count)
{
    for (int i = 0; i < count; ++i) {
        if (stop) {
            return makeError(ErrorCode::Cancelled, "run stopped", "step " + std::to_string(stepsDone));
        }
        const auto t0 = Clock::now();
        Result<double> loss = reference->trainBatch(mbDone, m());
        const auto dt = Clock::now() - t0;
        if (!loss) {
            return loss.error();
        }
        const TimeNs ns = std::chrono::duration_cast<std::chrono::nanoseconds>(dt).count();
        profiler::TraceEvent ev;
        ev.start = virtualNow;
        ev.end = virtualNow + ns;
        ev.microbatch = stepsDone;
        ev.kind = profiler::EventKind::Forward; // one event per global batch: forward+backward+update
        store.append(ev);
        virtualNow += ns;
        busy += ns;
        trainWall += dt;
        if (Status s = recordBatch(stepsDone, *loss, virtualNow, Clock::now()); !s) {
            return s;
        }
        stepsDone += 1;
        mbDone += m();
    }
    return ok();
}

} // namespace bs::runtime
