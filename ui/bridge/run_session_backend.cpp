#include "ui/bridge/run_session_backend.h"

#include "profiler/analysis/analyze.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/run_preflight.h"
#include "runtime/plan/sim/simulator.h"

#include <atomic>
#include <chrono>
#include <thread>

namespace bs::ui {

namespace {

constexpr auto kPollPeriod = std::chrono::milliseconds(100);

void appendMetrics(std::vector<runtime::BatchMetrics>& out, const std::vector<runtime::BatchMetrics>& fresh)
{
    for (const auto& m : fresh) {
        if (auto sample = plottableBatch(m)) {
            out.push_back(std::move(*sample));
        }
    }
}

} // namespace

RunSessionBackend::RunSessionBackend(std::string label, runtime::RunConfig config, runtime::SessionOptions options)
    : m_label(std::move(label))
    , m_config(std::move(config))
    , m_options(std::move(options))
{}

Status RunSessionBackend::run(RunContext& ctx)
{
    // Pre-flight (issue 14): a run that cannot fit is refused with the estimate, before anything
    // is allocated; the GUI shows the refusal like any run that cannot start.
    runtime::PreflightScope preflight;
    preflight.reference = m_options.reference;
    if (Status fits = runtime::preflightRun(m_config, runtime::probeMemoryCapacity(), preflight); !fits) {
        return fits;
    }
    if (m_warmUp && !ctx.stopRequested()) {
        if (Status warm = runtime::RunSession::warmUp(m_config); !warm) {
            return warm;
        }
    }
    auto created = runtime::RunSession::create(m_config, m_options);
    if (!created) {
        return created.error();
    }
    runtime::RunSession& session = *created;
    {
        const std::lock_guard<std::mutex> lock(m_sessionMutex);
        m_session = &session;
    }
    struct Detach // apply() must not reach the session once run() leaves
    {
        RunSessionBackend* self;
        ~Detach()
        {
            const std::lock_guard<std::mutex> lock(self->m_sessionMutex);
            self->m_session = nullptr;
        }
    } detach{this};
    const int steps = m_config.training.steps;
    std::vector<runtime::BatchMetrics> metrics;
    std::atomic<bool> training{true};
    // Poller: the only publisher while the worker is inside runSteps().
    std::thread poller([&] {
        while (training.load()) {
            std::this_thread::sleep_for(kPollPeriod);
            if (ctx.stopRequested()) {
                session.requestStop(); // thread-safe; runSteps returns Cancelled after the current action
            }
            appendMetrics(metrics, session.pollMetrics());
            auto update = std::make_shared<RunUpdate>();
            update->label = m_label;
            update->trace = session.trace();
            update->metrics = metrics;
            update->laterSettings = runtime::analysisSegments(session.appliedChanges());
            update->progress = steps > 0 && !metrics.empty() ? static_cast<double>(metrics.back().step + 1) / steps : 0;
            ctx.publish(std::move(update));
        }
    });
    // A resumed session (SessionOptions::resume) starts at its checkpoint's step: train the rest.
    const Status trained = session.runSteps(steps - session.stepsDone());
    training = false;
    poller.join();
    {
        const std::lock_guard<std::mutex> lock(m_sessionMutex);
        m_session = nullptr; // no apply can arrive while the run is finished and analysed
    }
    const Status finished = session.finish(); // writes trace.json / summary.json; keeps what was recorded
    appendMetrics(metrics, session.pollMetrics());

    auto final = std::make_shared<RunUpdate>();
    final->label = m_label;
    final->trace = session.trace();
    final->metrics = std::move(metrics);
    final->progress = 1.0;
    final->finished = trained.has_value();
    final->laterSettings = runtime::analysisSegments(session.appliedChanges());
    for (const runtime::AppliedChange& change : session.appliedChanges()) {
        final->applied.push_back({change.step, change.config});
    }
    // Attributed per setting: the run's first settings, then each Apply's from its boundary on.
    if (auto schedule = runtime::makeSchedule(runtime::toScheduleParams(m_config)); schedule && final->trace) {
        // Stashing included: a PipeDream/2BW run's stash memory is its stashed versions'.
        final->report = profiler::analyze(*final->trace, runtime::analysisOptionsFor(*schedule, nullptr, final->laterSettings));
    }
    ctx.publish(std::move(final));
    if (!trained) {
        return trained;
    }
    return finished;
}

Status RunSessionBackend::apply(const runtime::RunConfig& wanted)
{
    const std::lock_guard<std::mutex> lock(m_sessionMutex);
    if (!m_session) {
        return makeError(ErrorCode::Unavailable, "no live run is training", m_label);
    }
    return m_session->requestApply(wanted);
}

} // namespace bs::ui
