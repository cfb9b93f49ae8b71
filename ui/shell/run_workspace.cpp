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
    if (m_showsRuns) {
        return; // the runs shown stay until the user removes them
    }
    m_showsRuns = true;
    m_slots = {};
    m_reserved = {};
    m_selected = -1;
}

void RunWorkspace::leaveRunMode()
{
    m_showsRuns = false;
    m_slots = {};
    m_reserved = {};
    m_selected = -1;
}

int RunWorkspace::firstFree() const
{
    for (int i = 0; i < kSlots; ++i) {
        if (isFree(i)) {
            return i;
        }
    }
    return -1;
}

int RunWorkspace::freeSlots() const
{
    int free = 0;
    for (int i = 0; i < kSlots; ++i) {
        free += isFree(i) ? 1 : 0;
    }
    return free;
}

bool RunWorkspace::empty() const
{
    return freeSlots() == kSlots;
}

int RunWorkspace::reserve()
{
    const int index = firstFree();
    if (index >= 0) {
        m_reserved[static_cast<std::size_t>(index)] = true;
    }
    return index;
}

void RunWorkspace::release(int index)
{
    if (index >= 0 && index < kSlots) {
        m_reserved[static_cast<std::size_t>(index)] = false;
    }
}

void RunWorkspace::remove(int index)
{
    if (index < 0 || index >= kSlots) {
        return;
    }
    slot(index).reset();
    m_reserved[static_cast<std::size_t>(index)] = false;
    if (m_selected == index) {
        m_selected = -1;
    }
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
    const int index = firstFree();
    if (index < 0) {
        return -1; // every slot holds a run the user has not removed
    }
    auto final = std::make_shared<RunUpdate>();
    final->label = run.label;
    final->trace = run.result.trace;
    final->report = run.result.report;
    final->finished = true;
    slot(index) = RunSlot{run, final, true, false, config, {}, calibrationScope(config), std::move(drift), {}, {}};
    return index;
}

void RunWorkspace::placeStarted(int index, const PredictedRun& plan, const runtime::RunConfig& config, bool measured)
{
    if (index < 0 || index >= kSlots) {
        return;
    }
    release(index);
    slot(index) = RunSlot{plan, nullptr, measured, true, config, {}, calibrationScope(config), {}, {}, {}};
}

bool RunWorkspace::select(int index)
{
    if (index < 0 || index >= kSlots || !slot(index)) {
        return false;
    }
    m_selected = index;
    return true;
}

std::string calibrationScope(const runtime::RunConfig& config)
{
    const auto& m = config.model.shape;
    // The shape, not only the preset's name: an explicit shape equal to a preset is the same model.
    return "model " + std::to_string(m.layers) + "x" + std::to_string(m.dModel) + " h" + std::to_string(m.heads) + " T"
        + std::to_string(m.seqLen) + " V" + std::to_string(m.vocab) + " on " + config.device.name;
}

std::vector<runtime::StatisticsRun> RunWorkspace::statisticsRuns(const std::string& scope) const
{
    std::vector<runtime::StatisticsRun> runs;
    for (const auto& run : m_slots) {
        if (!run || !run->measured || run->scope != scope) {
            continue; // a replay's metrics are the cost model's, never a measured noise scale
        }
        std::shared_ptr<const std::vector<runtime::BatchMetrics>> metrics = run->openedMetrics;
        if (!metrics && run->latest) { // a live run, finished or not: what it measured so far
            metrics = std::shared_ptr<const std::vector<runtime::BatchMetrics>>(run->latest, &run->latest->metrics);
        }
        if (!metrics || metrics->empty()) {
            continue;
        }
        runs.push_back({"run " + (run->directory.empty() ? run->plan.label : run->directory), run->config,
            std::move(metrics), !run->applied.empty()});
    }
    return runs;
}

CalibrationPtr RunWorkspace::calibrationFor(const std::string& scope) const
{
    const auto it = m_scopes.find(scope);
    return it == m_scopes.end() ? nullptr : it->second.calibration;
}

Result<CalibrationPtr> RunWorkspace::addCalibrationSample(const std::string& scope, runtime::CostSample sample)
{
    Scoped& scoped = m_scopes[scope];
    const std::size_t stages = sample.costs.stages.size();
    std::vector<runtime::CostSample> samples = scoped.samples;
    std::erase_if(samples,
        [&](const runtime::CostSample& s) { return s.source == sample.source || s.costs.stages.size() != stages; });
    samples.push_back(std::move(sample));
    auto calibration = calibrationFromSamples(samples);
    if (!calibration) {
        return calibration.error();
    }
    scoped.samples = std::move(samples);
    scoped.calibration = *calibration;
    m_lastScope = scope;
    Q_EMIT calibrationChanged(scope, scoped.calibration);
    return scoped.calibration;
}

} // namespace bs::ui
