#include "runtime/plan/sim/goodput_runs.h"

#include "runtime/plan/rundir/run_loader.h"
#include "runtime/plan/schedule/catalogue.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <utility>

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

/// A run's figures for the fit (TargetRun without the samples) and its validation curve.
struct FitRun
{
    TargetRun settings; ///< samplesToTarget unset
    double globalBatch = 0;
    std::vector<std::pair<std::int64_t, double>> validation; ///< (step, finite validation loss)
};

/// The samples `run` trained until its validation loss first reached `loss`; nullopt if never.
std::optional<double> samplesTo(const FitRun& run, double loss)
{
    for (const auto& [step, value] : run.validation) {
        if (value <= loss) {
            return static_cast<double>(step + 1) * run.globalBatch;
        }
    }
    return std::nullopt;
}

/// The runs (with their samples) that reached `loss`.
std::vector<TargetRun> runsTo(const std::vector<FitRun>& runs, double loss)
{
    std::vector<TargetRun> out;
    for (const FitRun& run : runs) {
        if (auto samples = samplesTo(run, loss)) {
            out.push_back(run.settings);
            out.back().samplesToTarget = *samples;
        }
    }
    return out;
}

/// Fewer than two lags reached the target (short calibration runs often stop above it): the lag
/// cost from every run's samples to the lowest validation loss all of them reached, rather than
/// none, which ranked the smallest window (the most stale) first. Nullopt where the runs hold one lag.
std::optional<GoodputModel> lagCostAtCommonLoss(
    const NoiseScaleInput& noise, const std::vector<FitRun>& runs, const std::vector<TargetRun>& reached, LrRule lr)
{
    std::optional<double> common; // the highest of the runs' lowest losses: every run reached it
    std::vector<int> lags;
    for (const FitRun& run : runs) {
        if (run.validation.empty()) {
            continue;
        }
        double lowest = run.validation.front().second;
        for (const auto& point : run.validation) {
            lowest = std::min(lowest, point.second);
        }
        common = std::max(common.value_or(lowest), lowest);
        lags.push_back(run.settings.lag);
    }
    if (!common || std::adjacent_find(lags.begin(), lags.end(), std::not_equal_to<>()) == lags.end()) {
        return std::nullopt;
    }
    auto atLevel = GoodputModel::fit(noise, runsTo(runs, *common), lr);
    if (!atLevel || !atLevel->lagCostFitted()) {
        return std::nullopt;
    }
    auto model = GoodputModel::fitWithLagCostAt(noise, reached, *atLevel, *common, std::move(lr));
    return model ? std::optional<GoodputModel>(std::move(model).value()) : std::nullopt;
}

} // namespace

Result<GoodputModel> goodputFromRuns(const std::vector<StatisticsRun>& runs, std::optional<double> targetLoss)
{
    std::vector<NoiseScaleInput> noiseScales;
    std::vector<FitRun> fitRuns;
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
        if (!history.empty()) {
            if (auto measured = noiseScaleFromHistory(history, run.source)) {
                noiseScales.push_back(std::move(measured).value());
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
        FitRun fitRun{{run.source, 0.0, static_cast<double>(pipeline->batchPerUpdate(b)), measuredLag(run, *pipeline)},
            static_cast<double>(pipeline->globalBatch(b)), {}};
        for (const auto& batch : *run.metrics) {
            if (batch.valLoss && std::isfinite(*batch.valLoss)) {
                fitRun.validation.emplace_back(batch.step, *batch.valLoss);
            }
        }
        fitRuns.push_back(std::move(fitRun));
    }
    const std::optional<NoiseScaleInput> noise = combineNoiseScales(noiseScales);
    if (!noise) {
        std::string names;
        for (const StatisticsRun& run : runs) {
            names += (names.empty() ? "" : ", ") + run.source;
        }
        return makeError(ErrorCode::InvalidArgument,
            "noise scale: none of the runs records one (metrics \"noise\")" + (names.empty() ? "" : ": " + names),
            "a run trained with this version (two or more updates per stage)");
    }
    if (!targetLoss) {
        return GoodputModel::fit(*noise, {}, lr);
    }
    const std::vector<TargetRun> reached = runsTo(fitRuns, *targetLoss);
    auto model = GoodputModel::fit(*noise, reached, lr);
    if (model && !model->lagCostFitted()) {
        if (auto fallback = lagCostAtCommonLoss(*noise, fitRuns, reached, lr)) {
            return std::move(*fallback);
        }
    }
    return model;
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
