#include "app/cli/measured_compare.h"

#include "app/cli/cli_common.h"
#include "app/cli/table.h"
#include "profiler/analysis/analyze.h"
#include "profiler/analysis/report_json.h"
#include "runtime/plan/rundir/run_loader.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/simulator.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace bs::cli {

namespace {

std::string scientific(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2e", v);
    return buf;
}

/// "—" where the run measured no drift (a replayed simulation, a run without sampled tensors).
std::string driftText(const runtime::RunDrift& d, double v) { return d.measured() ? scientific(v) : "-"; }

/// B_simple in samples, "-" where the run has none (yet).
std::string noiseText(double bSimple, bool measured)
{
    return measured && std::isfinite(bSimple) ? fixed(bSimple, 1) : "-";
}

std::string boundText(const std::vector<int>& bounds, std::size_t stage)
{
    return stage < bounds.size() ? std::to_string(bounds[stage]) : "-";
}

std::string stageNoise(const MeasuredRun& r, int stage)
{
    if (r.noise) {
        for (const runtime::StageNoiseScale& n : r.noise->stages) {
            if (n.stage == stage) {
                return noiseText(n.bSimple, true);
            }
        }
    }
    return "-";
}

nlohmann::json runJson(const MeasuredRun& r)
{
    nlohmann::json out = profiler::toJson(r.report);
    out["run"] = r.label;
    out["schedule"] = r.schedule;
    out["ranks"] = r.ranks;
    out["stages_per_rank"] = r.stagesPerRank;
    out["microbatches"] = r.microbatches;
    out["accum"] = r.accum;
    out["steps"] = r.steps;
    out["throughput_samples_per_s"] = r.samplesPerSecond;
    out["drift_measured"] = r.drift.measured();
    out["drift_samples"] = r.drift.samples;
    out["mean_drift"] = r.drift.meanDrift;
    out["max_drift"] = r.drift.maxDrift;
    out["max_version_lag_measured"] = r.drift.maxLag;
    nlohmann::json stages = nlohmann::json::array();
    for (const runtime::StageDrift& s : r.drift.stages) {
        nlohmann::json j = {{"stage", s.stage}, {"rank", s.rank}, {"chunk", s.chunk}, {"max_version_lag", s.maxLag},
            {"drift_samples", s.samples}, {"mean_drift", s.meanDrift}, {"max_drift", s.maxDrift}};
        const auto i = static_cast<std::size_t>(s.stage);
        j["lag_bound"] = i < r.lagBounds.size() ? nlohmann::json(r.lagBounds[i]) : nlohmann::json(nullptr);
        stages.push_back(std::move(j));
    }
    out["noise_scale"] = r.noise ? nlohmann::json(*r.noise) : nlohmann::json(nullptr);
    out["model_stages"] = std::move(stages); // per_stage (the report's) is per rank on multi-stage runs
    return out;
}

} // namespace

Result<MeasuredRun> measureRunDir(const std::filesystem::path& dir)
{
    auto loaded = runtime::loadRun(dir);
    if (!loaded) {
        return loaded.error();
    }
    if (!loaded->trace) {
        return makeError(ErrorCode::IoError, "the run has no trace.json (train with profiling.trace on)", dir.string());
    }
    const runtime::RunConfig& c = loaded->config;
    runtime::ScheduleParams params = runtime::toScheduleParams(c);
    params.batches = 1; // placement, analysis options and bounds do not depend on N (a long run's would be big)
    auto schedule = runtime::makeSchedule(params);
    if (!schedule) {
        return schedule.error();
    }
    MeasuredRun r;
    r.label = dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
    r.schedule = c.schedule.name;
    r.ranks = schedule->ranks();
    r.stagesPerRank = schedule->stagesPerRank();
    r.microbatches = c.pipeline.microbatches;
    const auto pipeline = runtime::resolvedPipeline(c);
    r.accum = pipeline ? pipeline->accum() : 0;
    r.steps = static_cast<int>(loaded->metrics.size());
    r.microBatchSize = c.pipeline.microBatchSize;
    r.report = profiler::analyze(*loaded->trace, runtime::analysisOptionsFor(*schedule));
    const double seconds = toSeconds(r.report.makespan);
    r.samplesPerSecond = seconds > 0 ? static_cast<double>(r.microbatches * r.microBatchSize * r.steps) / seconds : 0;
    const std::vector<runtime::StageMetrics>* stages = nullptr;
    if (loaded->summary && !loaded->summary->stages.empty()) {
        stages = &loaded->summary->stages;
    } else if (!loaded->metrics.empty()) {
        stages = &loaded->metrics.back().stages; // cut short: the last batch it recorded
    }
    if (stages) {
        r.drift = runtime::runDrift(*stages, schedule->rankOfStage);
    }
    if (loaded->summary && loaded->summary->noiseScale) {
        r.noise = loaded->summary->noiseScale;
    } else if (!loaded->metrics.empty()) {
        r.noise = loaded->metrics.back().noise;
    }
    r.lagBounds = runtime::lagBounds(params);
    return r;
}

int compareRunDirs(const std::vector<std::string>& dirs, bool json)
{
    std::vector<MeasuredRun> runs;
    for (const std::string& dir : dirs) {
        auto run = measureRunDir(dir);
        if (!run) {
            return reportError(run.error());
        }
        runs.push_back(std::move(*run));
    }
    if (json) {
        nlohmann::json out = nlohmann::json::array();
        for (const MeasuredRun& r : runs) {
            out.push_back(runJson(r));
        }
        std::cout << out.dump(2) << '\n';
        return kExitOk;
    }
    Table table({"run", "schedule", "p", "v", "m", "a", "makespan ms", "bubble", "steady bubble", "samples/s",
        "max lag", "lag bound", "mean drift", "max drift", "noise scale", "B small/big"});
    for (const MeasuredRun& r : runs) {
        int bound = -1;
        for (int b : r.lagBounds) {
            bound = std::max(bound, b);
        }
        table.addRow({r.label, r.schedule, std::to_string(r.ranks), std::to_string(r.stagesPerRank),
            std::to_string(r.microbatches), r.accum > 0 ? std::to_string(r.accum) : "-",
            fixed(toMillis(r.report.makespan), 3), percent(r.report.bubbleFraction),
            percent(r.report.steadyBubbleFraction), fixed(r.samplesPerSecond, 1), std::to_string(r.drift.maxLag),
            bound >= 0 ? std::to_string(bound) : "-", driftText(r.drift, r.drift.meanDrift),
            driftText(r.drift, r.drift.maxDrift), noiseText(r.noise ? r.noise->bSimple : NAN, r.noise.has_value()),
            r.noise ? fixed(r.noise->bSmall, 0) + "/" + fixed(r.noise->bBig, 0) : "-"});
    }
    std::cout << table.render()
              << "(measured: bubble from each run's trace; lag and drift ‖θ_B − θ_F‖/‖θ_F‖ from its tensors, "
                 "mean over every sampled micro-batch and the largest stage's max; lag bound: the schedule's "
                 "stated bound, largest stage; noise scale: B_simple = tr(Σ)/|G|² in samples from the gradients "
                 "of B small and B big samples, averaged over updates; - none)\n\n";
    Table stages({"run", "stage", "rank", "chunk", "max lag", "lag bound", "drift samples", "mean drift", "max drift",
        "noise scale"});
    for (const MeasuredRun& r : runs) {
        for (const runtime::StageDrift& s : r.drift.stages) {
            stages.addRow({r.label, std::to_string(s.stage), std::to_string(s.rank), std::to_string(s.chunk),
                std::to_string(s.maxLag), boundText(r.lagBounds, static_cast<std::size_t>(s.stage)),
                std::to_string(s.samples), s.samples > 0 ? scientific(s.meanDrift) : "-",
                s.samples > 0 ? scientific(s.maxDrift) : "-", stageNoise(r, s.stage)});
        }
    }
    std::cout << stages.render() << "(one row per model stage: a rank holding v chunks has v rows)\n";
    return kExitOk;
}

} // namespace bs::cli
