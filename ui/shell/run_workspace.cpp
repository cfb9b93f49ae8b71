#include "ui/shell/run_workspace.h"

#include "profiler/analysis/analyze.h"
#include "runtime/plan/sim/tuner.h"
#include "ui/timeline/timeline_index.h"

#include <algorithm>

namespace bs::ui {

PredictedRun measuredRun(std::string label, runtime::Schedule schedule,
    std::shared_ptr<const profiler::TraceSnapshot> trace, const profiler::AnalysisOptions& options)
{
    PredictedRun run;
    run.label = std::move(label);
    run.result.report = profiler::analyze(*trace, options);
    run.lagBound = runtime::versionLagBound(schedule, run.result.report);
    run.index = TimelineIndex::build(trace, run.result.report.bubbles); // the run's one analysis
    run.result.schedule = std::move(schedule);
    run.result.trace = std::move(trace);
    return run;
}

RunWorkspace::RunWorkspace(QObject* parent)
    : QObject(parent)
{}

void RunWorkspace::enterRunMode()
{
    m_showsRuns = true;
    m_slots = {};
    m_selected = -1;
    m_started = 0; // a new batch of live runs starts at the top slot
}

runtime::RunDrift RunSlot::measuredDrift() const
{
    if (!measured) {
        return {};
    }
    if (openedDrift.measured() || !latest || latest->metrics.empty()) {
        return openedDrift;
    }
    return runtime::runDrift(latest->metrics.back().stages, plan.result.schedule.rankOfStage);
}

int RunWorkspace::placeOpened(const PredictedRun& run, const runtime::RunConfig& config, runtime::RunDrift drift)
{
    if (!m_showsRuns) {
        enterRunMode(); // the slots showed predictions: none of them stays
    }
    const int index = m_opened++ % kSlots;
    auto final = std::make_shared<RunUpdate>();
    final->label = run.label;
    final->trace = run.result.trace;
    final->report = run.result.report;
    final->finished = true;
    slot(index) = RunSlot{run, final, true, false, config, {}, std::move(drift)};
    return index;
}

int RunWorkspace::placeStarted(const PredictedRun& plan, const runtime::RunConfig& config, bool measured)
{
    const int index = m_started++ % kSlots;
    slot(index) = RunSlot{plan, nullptr, measured, true, config, {}, {}};
    return index;
}

bool RunWorkspace::select(int index)
{
    if (index < 0 || index >= kSlots || !slot(index)) {
        return false;
    }
    m_selected = index;
    return true;
}

Result<CalibrationPtr> RunWorkspace::addCalibrationSample(runtime::CostSample sample)
{
    const std::size_t stages = sample.costs.stages.size();
    std::vector<runtime::CostSample> samples = m_samples;
    std::erase_if(samples,
        [&](const runtime::CostSample& s) { return s.source == sample.source || s.costs.stages.size() != stages; });
    samples.push_back(std::move(sample));
    auto calibration = calibrationFromSamples(samples);
    if (!calibration) {
        return calibration.error();
    }
    m_samples = std::move(samples);
    m_calibration = *calibration;
    Q_EMIT calibrationChanged(m_calibration);
    return m_calibration;
}

} // namespace bs::ui
