// The reference driver (--reference): plain non-pipelined training of the same micro-batches,
// one trace event per global batch.
#include "runtime/train/exec/session_state.h"

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
        const TimeNs ns = std::chrono::duration_cast<std::chrono::nanoseconds>(dt).count(); // training only
        profiler::TraceEvent ev;
        ev.start = virtualNow;
        ev.end = virtualNow + ns;
        ev.microbatch = stepsDone;
        ev.kind = profiler::EventKind::Forward; // one event per global batch: forward+backward+update
        store.append(ev);
        virtualNow += ns;
        busy += ns;
        // The wall clock runs through the batch's recording (and validation pass, which the
        // summary subtracts through evalWall), as the pipeline drivers' does: before, evalWall was
        // subtracted from a trainWall that never held it, overstating --reference's tokens/s.
        const Status recorded = recordBatch(stepsDone, *loss, virtualNow, t0);
        trainWall += Clock::now() - t0;
        if (!recorded) {
            return recorded;
        }
        stepsDone += 1;
        mbDone += m();
        if (targetReached) {
            break; // SessionOptions::stopAtTarget
        }
    }
    return ok();
}

} // namespace bs::runtime
