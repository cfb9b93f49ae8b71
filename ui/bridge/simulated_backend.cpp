#include "ui/bridge/simulated_backend.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace bs::ui {

SimulatedBackend::SimulatedBackend(std::string label, runtime::SimulationRequest request, Options options)
    : m_label(std::move(label))
    , m_request(std::move(request))
    , m_options(options)
{}

SimulatedBackend::SimulatedBackend(std::string label, runtime::SimulationResult result, Options options)
    : m_label(std::move(label))
    , m_result(std::move(result))
    , m_options(options)
{}

Status SimulatedBackend::run(RunContext& ctx)
{
    if (!m_result) {
        auto simulated = runtime::simulate(*m_request);
        if (!simulated) {
            return simulated.error();
        }
        m_result = std::move(simulated).value();
    }
    const profiler::TraceSnapshot& full = *m_result->trace;
    // Replay in order of completion: an event appears once it has ended in virtual time.
    std::vector<profiler::TraceEvent> events = full.toVector();
    std::stable_sort(events.begin(), events.end(),
        [](const profiler::TraceEvent& a, const profiler::TraceEvent& b) { return a.end < b.end; });
    const TimeNs endTime = events.empty() ? 0 : events.back().end;
    profiler::TraceStore store(full.meta());

    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    const auto period = std::chrono::microseconds(1'000'000 / std::max(1, m_options.publishHz));
    std::size_t next = 0;
    while (next < events.size()) {
        if (ctx.stopRequested()) {
            auto update = std::make_shared<RunUpdate>();
            update->label = m_label;
            update->trace = store.snapshot();
            update->progress = endTime > 0 ? static_cast<double>(events[next].end) / static_cast<double>(endTime) : 0;
            ctx.publish(std::move(update));
            return makeError(ErrorCode::Cancelled, "run stopped by the user", m_label);
        }
        const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
        const double fraction = m_options.wallSeconds > 0 ? std::min(1.0, elapsed / m_options.wallSeconds) : 1.0;
        const auto virtualNow = static_cast<TimeNs>(fraction * static_cast<double>(endTime));
        std::size_t upto = next;
        while (upto < events.size() && (events[upto].end <= virtualNow || fraction >= 1.0)) {
            ++upto;
        }
        if (upto > next) {
            store.append(events.data() + next, upto - next);
            next = upto;
        }
        if (next < events.size()) {
            auto update = std::make_shared<RunUpdate>();
            update->label = m_label;
            update->trace = store.snapshot();
            update->progress = fraction;
            ctx.publish(std::move(update));
            std::this_thread::sleep_for(period);
        }
    }
    auto final = std::make_shared<RunUpdate>();
    final->label = m_label;
    final->trace = m_result->trace;
    final->report = m_result->report;
    final->progress = 1.0;
    final->finished = true;
    ctx.publish(std::move(final));
    return ok();
}

} // namespace bs::ui
