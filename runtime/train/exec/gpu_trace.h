#pragma once
// CUPTI in a GPU run: the collector records kernels, memcpys and memsets tagged with the action
// that launched them (the tensor executor pushes the tags: KernelTagSink), and this class puts
// them into the run's trace as kernel-lane events under their stage.
//
// The collector writes into a private staging store on the host clock; the run's trace may be on
// another clock (the serial driver's virtual per-stage clocks). So each kernel is moved by its own
// action's offset: when the executor begins an action it notes the host time, when the driver
// places the action it notes the trace time, and every kernel of that action (same stage, kind,
// micro-batch and version) gets start' = start − hostBegin + traceStart. Kernels thus sit inside
// their action's block on the virtual timeline exactly as they ran relative to its start; on a
// wall-clock trace (threaded, multi-process) the offset is the clocks' difference.
//
// Which action a kernel belongs to: every stage works on its own CUDA stream, bound to the stage
// in the collector (bindStage), so the kernel's stage is its stream's; its action is the one of
// that stage whose host window [actionBegin, actionEnd] holds the kernel's midpoint. The window
// holds all of the action's GPU work because the executor's timer waits for the action's end
// event before actionEnd (device_timer.h), and a stage's actions never overlap. This needs no
// tag: backward kernels are launched by autograd's device thread, where CUPTI sees no pushed
// tag. The tag, where present, is the check: a tagged kernel whose tag names another action than
// its window is counted (cupti.tag_disagrees). A kernel outside every window (clock error at an
// edge) falls back to its tag, then to its stage's last offset.
//
// Hand-off copies between two GPUs: the executor pushes a Send tag around each (transferBegin:
// the sender's stage, the receiver in its version field), so the collector puts their MEMCPY2 /
// MEMCPY records on the sender's comm lane (aux = receiver); each moves with the receiving
// action whose window holds it (the receiver copies at the start of that action).
//
// drain() moves what the collector's timed flush delivered (call it often: after each action);
// finish() stops the collector, drains the rest and writes counters into the trace attributes:
// cupti.kernels, cupti.memcpys, cupti.memsets, cupti.dropped_records, cupti.untagged,
// cupti.unattributed, cupti.host_overhead_ns (host time spent in tag pushes/pops, flushes and
// draining: what CUPTI costs the run on the host, beside the GPU-side cost a benchmark measures).
//
// Torch-free and CUPTI-free itself: the collector comes through KernelCollector, so everything
// here is tested on the CPU with a fake that appends hand-made kernel events.

#include "base/result.h"
#include "profiler/cupti/cupti_collector.h"
#include "profiler/trace/trace_store.h"
#include "runtime/train/exec/kernel_tags.h"

#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace bs::runtime {

/// The collector as GpuTrace uses it (CuptiCollector in a real run, a fake in tests).
class KernelCollector
{
public:
    virtual ~KernelCollector() = default;
    virtual Status push(const profiler::cupti::ActionTag& tag) = 0;
    virtual Status pop() = 0;
    virtual Status flush() = 0;
    virtual Status stop() = 0;
    virtual profiler::cupti::CollectorStats stats() const = 0;
    /// GPU work on `stream` of `device` is stage `stage`'s (CuptiCollector::bindStream).
    virtual Status bindStream(int /*stage*/, int /*device*/, void* /*stream*/) { return ok(); }
};

/// Starts a collector writing into `staging`, its times in ns since host steady-clock `originNs`.
using KernelCollectorFactory =
    std::function<Result<std::unique_ptr<KernelCollector>>(profiler::TraceStore& staging, TimeNs originNs)>;
/// profiler/cupti's CuptiCollector (Unavailable with the reason when CUPTI cannot start).
KernelCollectorFactory cuptiCollectorFactory();

/// 1 − GPU busy time / (stages · makespan), busy time being each stage's kernel-lane union
/// (profiler/cupti's gpuComputeView: concurrent kernels counted once). nullopt when the trace has
/// no kernel events (a CPU run, or CUPTI off) or makespan ≤ 0. On one GPU under the serial driver
/// each stage's kernels sit on its virtual clock, so this is the bubble p GPUs would see from
/// GPU activity, not from host timestamps.
std::optional<double> gpuBubbleFraction(const profiler::TraceSnapshot& trace, int stages, TimeNs makespan);

class GpuTrace final : public KernelTagSink
{
public:
    /// Starts the collector; `target` (the run's trace) must outlive this object.
    static Result<std::unique_ptr<GpuTrace>> start(profiler::TraceStore& target, const KernelCollectorFactory& factory);
    ~GpuTrace() override;

    void actionBegin(const profiler::cupti::ActionTag& tag, TimeNs hostBeginNs) override;
    void actionEnd(const profiler::cupti::ActionTag& tag, TimeNs hostEndNs) override;
    void bindStage(int stage, int device, void* stream) override;
    void transferBegin(const profiler::cupti::ActionTag& send) override;
    void transferEnd(const profiler::cupti::ActionTag& send) override;
    /// The driver placed an action (its event as appended to the run's trace). Thread-safe.
    void placed(const profiler::TraceEvent& action);
    /// Moves the kernels delivered so far whose action was placed into the run's trace. Thread-safe.
    void drain();
    /// Stops the collector, drains everything, writes the cupti.* attributes into `meta`.
    Status finish(profiler::TraceMeta& meta);

    TimeNs hostOverheadNs() const;
    std::size_t kernelEventsAppended() const;
    /// Kernels placed by their stage's action window / whose tag named another action.
    std::size_t placedByWindow() const;
    std::size_t tagDisagreements() const;

private:
    GpuTrace(profiler::TraceStore& target, TimeNs origin);
    void drainLocked();
    bool placeLocked(profiler::TraceEvent ev);

    // One action's host window on one trace stage, ns since the origin.
    struct Window
    {
        TimeNs begin = 0;
        TimeNs end = 0; ///< kOpen until actionEnd
        std::uint64_t key = 0;
        profiler::cupti::ActionTag tag;
        std::optional<TimeNs> shift; ///< trace time − host time, once the driver placed the action
    };
    static constexpr TimeNs kOpen = std::numeric_limits<TimeNs>::max();
    Window* windowAt(int stage, TimeNs t);

    profiler::TraceStore& m_target;
    profiler::TraceStore m_staging;
    std::unique_ptr<KernelCollector> m_collector;
    TimeNs m_origin = 0;
    mutable std::mutex m_mutex;
    std::unordered_map<int, std::vector<Window>> m_windows; // trace stage -> its actions, in begin order
    std::unordered_map<std::uint64_t, TimeNs> m_shift; // tag -> trace time − host time
    std::unordered_map<int, TimeNs> m_lastShift; // stage -> shift of its last placed action
    std::vector<profiler::TraceEvent> m_waiting; // kernels whose action is not placed yet
    std::size_t m_consumed = 0; // staging events looked at
    std::size_t m_appended = 0;
    std::size_t m_byWindow = 0;
    std::size_t m_disagree = 0;
    TimeNs m_overhead = 0;
    bool m_finished = false;
};

} // namespace bs::runtime
