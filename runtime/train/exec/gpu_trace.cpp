#include "runtime/train/exec/gpu_trace.h"

#include "profiler/cupti/gpu_busy.h"
#include "runtime/train/model/device_timer.h"

#include <algorithm>

namespace bs::runtime {

namespace {

namespace cupti = profiler::cupti;

std::uint64_t keyOf(const cupti::ActionTag& tag)
{
    return cupti::packTag(tag).value_or(~std::uint64_t{0});
}

// The tag of the action a kernel event was launched under (the correlator keeps the launching
// action's kind in aux, the micro-batch and version as pushed).
std::uint64_t keyOfKernel(const profiler::TraceEvent& ev)
{
    cupti::ActionTag tag;
    tag.stage = ev.stage;
    tag.kind = static_cast<profiler::EventKind>(ev.aux);
    tag.microbatch = ev.microbatch;
    tag.version = ev.version;
    return keyOf(tag);
}

class CuptiAdapter final : public KernelCollector
{
public:
    explicit CuptiAdapter(std::unique_ptr<cupti::CuptiCollector> c)
        : m_c(std::move(c))
    {}
    Status push(const cupti::ActionTag& tag) override { return m_c->pushActionTag(tag); }
    Status pop() override { return m_c->popActionTag(); }
    Status flush() override { return m_c->flush(); }
    Status stop() override { return m_c->stop(); }
    cupti::CollectorStats stats() const override { return m_c->stats(); }
    Status bindStream(int stage, int device, void* stream) override { return m_c->bindStream(stage, device, stream); }

private:
    std::unique_ptr<cupti::CuptiCollector> m_c;
};

// Host time spent on profiling, added to `total` when the scope ends.
struct Overhead
{
    explicit Overhead(TimeNs& total)
        : m_total(total)
        , m_start(hostNowNs())
    {}
    ~Overhead() { m_total += hostNowNs() - m_start; }
    Overhead(const Overhead&) = delete;
    Overhead& operator=(const Overhead&) = delete;

private:
    TimeNs& m_total;
    TimeNs m_start;
};

} // namespace

std::optional<double> gpuBubbleFraction(const profiler::TraceSnapshot& trace, int stages, TimeNs makespan)
{
    std::vector<profiler::TraceEvent> kernels;
    trace.forEach([&](const profiler::TraceEvent& e) {
        if (e.lane == profiler::Lane::Kernel) {
            kernels.push_back(e);
        }
    });
    if (kernels.empty() || makespan <= 0 || stages < 1) {
        return std::nullopt;
    }
    TimeNs busy = 0;
    for (const profiler::TraceEvent& e : cupti::gpuComputeView(kernels)) {
        if (e.lane == profiler::Lane::Compute) {
            busy += e.duration();
        }
    }
    return 1.0 - static_cast<double>(busy) / (static_cast<double>(stages) * static_cast<double>(makespan));
}

KernelCollectorFactory cuptiCollectorFactory()
{
    return [](profiler::TraceStore& staging, TimeNs originNs) -> Result<std::unique_ptr<KernelCollector>> {
        cupti::CuptiOptions options;
        options.origin = originNs;
        auto collector = cupti::CuptiCollector::start(staging, options);
        if (!collector) {
            return collector.error();
        }
        return std::unique_ptr<KernelCollector>(std::make_unique<CuptiAdapter>(std::move(collector.value())));
    };
}

GpuTrace::GpuTrace(profiler::TraceStore& target, TimeNs origin)
    : m_target(target)
    , m_origin(origin)
{}

GpuTrace::~GpuTrace()
{
    if (!m_finished && m_collector) {
        (void)m_collector->stop();
    }
}

Result<std::unique_ptr<GpuTrace>> GpuTrace::start(profiler::TraceStore& target, const KernelCollectorFactory& factory)
{
    std::unique_ptr<GpuTrace> trace(new GpuTrace(target, hostNowNs()));
    auto collector = factory(trace->m_staging, trace->m_origin);
    if (!collector) {
        return collector.error();
    }
    trace->m_collector = std::move(collector.value());
    return trace;
}

void GpuTrace::actionBegin(const cupti::ActionTag& tag, TimeNs hostBeginNs)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    const Overhead cost(m_overhead);
    Window w;
    w.begin = hostBeginNs - m_origin;
    w.end = kOpen;
    w.key = keyOf(tag);
    w.tag = tag;
    m_windows[tag.stage].push_back(w);
    (void)m_collector->push(tag); // a tag out of range only leaves its kernels untagged
}

void GpuTrace::actionEnd(const cupti::ActionTag& tag, TimeNs hostEndNs)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    const Overhead cost(m_overhead);
    (void)m_collector->pop();
    auto& windows = m_windows[tag.stage];
    const std::uint64_t key = keyOf(tag);
    for (auto it = windows.rbegin(); it != windows.rend(); ++it) {
        if (it->key == key && it->end == kOpen) {
            it->end = std::max(it->begin, hostEndNs - m_origin);
            break;
        }
    }
}

void GpuTrace::bindStage(int stage, int device, void* stream)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    (void)m_collector->bindStream(stage, device, stream); // unbound: placed by tag, as before
}

void GpuTrace::transferBegin(const cupti::ActionTag& send)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    const Overhead cost(m_overhead);
    (void)m_collector->push(send); // no window: the copy lies inside the receiving action's
}

void GpuTrace::transferEnd(const cupti::ActionTag& /*send*/)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    const Overhead cost(m_overhead);
    (void)m_collector->pop();
}

GpuTrace::Window* GpuTrace::windowAt(int stage, TimeNs t)
{
    auto found = m_windows.find(stage);
    if (found == m_windows.end()) {
        return nullptr;
    }
    auto& windows = found->second; // begin order: the executor runs a stage's actions one by one
    auto after =
        std::upper_bound(windows.begin(), windows.end(), t, [](TimeNs v, const Window& w) { return v < w.begin; });
    if (after == windows.begin()) {
        return nullptr;
    }
    Window& w = *std::prev(after);
    return t <= w.end ? &w : nullptr;
}

void GpuTrace::placed(const profiler::TraceEvent& action)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    const Overhead cost(m_overhead);
    cupti::ActionTag tag;
    tag.stage = action.stage;
    tag.kind = action.kind;
    tag.microbatch = action.microbatch;
    tag.version = action.version;
    const std::uint64_t key = keyOf(tag);
    auto found = m_windows.find(action.stage);
    if (found == m_windows.end()) {
        return; // not an action the executor ran under a tag (e.g. a marker)
    }
    // The oldest unplaced window of this action (the driver places actions in the order each
    // stage performed them).
    for (Window& w : found->second) {
        if (w.key == key && !w.shift) {
            w.shift = action.start - w.begin;
            m_shift[key] = *w.shift;
            m_lastShift[action.stage] = *w.shift;
            return;
        }
    }
}

bool GpuTrace::placeLocked(profiler::TraceEvent ev)
{
    TimeNs shift = 0;
    const TimeNs mid = ev.start + (ev.end - ev.start) / 2;
    if (ev.lane == profiler::Lane::Comm) {
        // A Send (stage: the sender, aux: the receiver): the receiving stage copies the tensor at
        // the start of the action that takes it, so the copy lies in one of the receiver's windows
        // and moves with that action; outside every window (an edge), with the receiver's last
        // placed action, else the sender's.
        const int receiver = ev.aux;
        if (Window* w = windowAt(receiver, mid)) {
            if (!w->shift) {
                return false; // its action is not placed yet
            }
            shift = *w->shift;
        } else if (auto last = m_lastShift.find(receiver); last != m_lastShift.end()) {
            shift = last->second;
        } else if (auto sender = m_lastShift.find(ev.stage); sender != m_lastShift.end()) {
            shift = sender->second;
        } else {
            return false;
        }
        ev.start += shift;
        ev.end += shift;
        m_target.append(ev);
        ++m_appended;
        return true;
    }
    if (Window* w = windowAt(ev.stage, mid)) {
        if (!w->shift) {
            return false; // its action is not placed yet
        }
        if (ev.aux != cupti::kUntagged && keyOfKernel(ev) != w->key) {
            ++m_disagree;
        }
        shift = *w->shift;
        ev.aux = static_cast<std::uint16_t>(w->tag.kind);
        ev.microbatch = w->tag.microbatch;
        ev.version = w->tag.version;
        ++m_byWindow;
    } else if (ev.aux == cupti::kUntagged) {
        auto last = m_lastShift.find(ev.stage);
        if (last == m_lastShift.end()) {
            return false;
        }
        shift = last->second;
    } else {
        auto it = m_shift.find(keyOfKernel(ev));
        if (it == m_shift.end()) {
            return false;
        }
        shift = it->second;
    }
    ev.start += shift;
    ev.end += shift;
    m_target.append(ev);
    ++m_appended;
    return true;
}

void GpuTrace::drainLocked()
{
    std::vector<profiler::TraceEvent> waiting;
    waiting.swap(m_waiting);
    for (const profiler::TraceEvent& ev : waiting) {
        if (!placeLocked(ev)) {
            m_waiting.push_back(ev);
        }
    }
    if (m_staging.size() == m_consumed) {
        return;
    }
    const auto staged = m_staging.snapshot();
    for (std::size_t i = m_consumed; i < staged->size(); ++i) {
        if (!placeLocked((*staged)[i])) {
            m_waiting.push_back((*staged)[i]);
        }
    }
    m_consumed = staged->size();
}

void GpuTrace::drain()
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    const Overhead cost(m_overhead);
    drainLocked();
}

Status GpuTrace::finish(profiler::TraceMeta& meta)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    Status stopped = ok();
    {
        const Overhead cost(m_overhead);
        if (!m_finished) {
            stopped = m_collector->stop();
            m_finished = true;
        }
        drainLocked();
        // Still unplaced: an action that never reached the trace (a stopped run); keep them by stage.
        std::vector<profiler::TraceEvent> rest;
        rest.swap(m_waiting);
        for (profiler::TraceEvent ev : rest) {
            if (ev.lane != profiler::Lane::Comm) { // a Send's aux is its receiver, kept
                ev.aux = cupti::kUntagged;
            }
            if (!placeLocked(ev)) {
                m_waiting.push_back(ev);
            }
        }
    }
    const cupti::CollectorStats s = m_collector->stats();
    meta.attributes["cupti"] = "on";
    meta.attributes["cupti.kernels"] = std::to_string(s.records.kernels);
    meta.attributes["cupti.memcpys"] = std::to_string(s.records.memcpys);
    meta.attributes["cupti.memsets"] = std::to_string(s.records.memsets);
    meta.attributes["cupti.dropped_records"] = std::to_string(s.records.droppedRecords);
    meta.attributes["cupti.untagged"] = std::to_string(s.records.untagged);
    meta.attributes["cupti.unattributed"] = std::to_string(s.records.unattributed + m_waiting.size());
    meta.attributes["cupti.events_in_trace"] = std::to_string(m_appended);
    meta.attributes["cupti.host_overhead_ns"] = std::to_string(m_overhead);
    meta.attributes["cupti.placed_by_window"] = std::to_string(m_byWindow);
    meta.attributes["cupti.tag_disagrees"] = std::to_string(m_disagree + s.records.tagMismatches);
    meta.attributes["cupti.incomplete_records"] = std::to_string(s.records.incompleteRecords);
    return stopped;
}

TimeNs GpuTrace::hostOverheadNs() const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_overhead;
}

std::size_t GpuTrace::placedByWindow() const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_byWindow;
}

std::size_t GpuTrace::tagDisagreements() const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_disagree;
}

std::size_t GpuTrace::kernelEventsAppended() const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_appended;
}

} // namespace bs::runtime
