#include "runtime/plan/sim/goodput_runs.h"

#include "runtime/plan/rundir/run_loader.h"
#include "runtime/plan/schedule/catalogue.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace bs::runtime {

namespace {

/// The most updates a micro-batch crossed in `run`: what it measured, at least its schedule's bound.
int measuredLag(const StatisticsRun& run, const PipelineSettings& pipeline)
{
    int lag = 0;
    for (const auto& stage : run.metrics->back().stages) {
        lag = std::max(lag, stage.maxLag);
    }
    for (int bound : lagBounds(pipeline.params(1))) {
        lag = std::max(lag, bound);
    }
    return lag;
}

} // namespace

Result<GoodputModel> goodputFromRuns(const std::vector<StatisticsRun>& runs, std::optional<double> targetLoss)
{
    std::optional<NoiseScaleInput> noise;
    std::size_t noiseRecords = 0;
    std::vector<TargetRun> reached;
    LrRule lr;
    for (const StatisticsRun& run : runs) {
        if (!run.metrics || run.metrics->empty()) {
            continue;
        }
        std::vector<double> history;
        for (const auto& batch : *run.metrics) {
            if (batch.noise) {
                history.push_back(batch.noise->bSimple);
            }
        }
        // The noise scale of the run with the most estimates (a longer run's is the steadier).
        if (!history.empty() && history.size() > noiseRecords) {
            if (auto measured = noiseScaleFromHistory(history, run.source)) {
                noise = std::move(measured).value();
                noiseRecords = history.size();
            }
        }
        lr.rule = run.config.optimizer.lrScaling;
        lr.baseGlobalBatch = run.config.optimizer.baseGlobalBatch;
        if (!targetLoss || run.settingsChanged) {
            continue;
        }
        auto pipeline = resolvedPipeline(run.config);
        if (!pipeline) {
            return pipeline.error();
        }
        const int b = run.config.pipeline.microBatchSize;
        for (const auto& batch : *run.metrics) {
            if (batch.valLoss && std::isfinite(*batch.valLoss) && *batch.valLoss <= *targetLoss) {
                reached.push_back(
                    {run.source, static_cast<double>(batch.step + 1) * static_cast<double>(pipeline->globalBatch(b)),
                        static_cast<double>(pipeline->batchPerUpdate(b)), measuredLag(run, *pipeline)});
                break;
            }
        }
    }
    if (!noise) {
        std::string names;
        for (const StatisticsRun& run : runs) {
            names += (names.empty() ? "" : ", ") + run.source;
        }
        return makeError(ErrorCode::InvalidArgument,
            "noise scale: none of the runs records one (metrics \"noise\")" + (names.empty() ? "" : ": " + names),
            "a run trained with this version (two or more updates per stage)");
    }
    return GoodputModel::fit(*noise, reached, lr);
}

Result<std::vector<StatisticsRun>> statisticsRunsFrom(const std::vector<std::string>& dirs)
{
    std::vector<StatisticsRun> runs;
    for (const std::string& path : dirs) {
        if (!std::filesystem::exists(std::filesystem::path(path) / "config.toml")) {
            continue; // an imported job's rank traces: no statistics
        }
        auto loaded = loadRun(path, TraceLoad::Skip); // a trace can be hundreds of MB, and is not read here
        if (!loaded) {
            return loaded.error();
        }
        runs.push_back({"run " + path, std::move(loaded->config),
            std::make_shared<const std::vector<BatchMetrics>>(std::move(loaded->metrics))});
    }
    return runs;
}

Result<GoodputModel> goodputFromRuns(const std::vector<std::string>& dirs, std::optional<double> targetLoss)
{
    if (dirs.empty()) {
        return makeError(ErrorCode::InvalidArgument, "noise scale: no run given to measure it",
            "--calibrate RUN_DIR (a training run records its noise scale)");
    }
    auto runs = statisticsRunsFrom(dirs);
    if (!runs) {
        return runs.error();
    }
    auto model = goodputFromRuns(*runs, targetLoss);
    if (!model) { // the CLI's hint: where a noise scale comes from
        return makeError(ErrorCode::InvalidArgument, model.error().message,
            "--calibrate: a run directory trained with this version (two or more updates per stage)");
    }
    return model;
}

} // namespace bs::runtime
