#include "runtime/plan/sim/goodput_runs.h"

#include "runtime/plan/config/run_config.h"
#include "runtime/plan/rundir/run_loader.h"
#include "runtime/plan/schedule/catalogue.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace bs::runtime {

Result<GoodputModel> goodputFromRuns(const std::vector<std::string>& dirs, std::optional<double> targetLoss)
{
    std::optional<NoiseScaleInput> noise;
    std::size_t noiseRecords = 0;
    std::vector<TargetRun> reached;
    LrRule lr;
    for (const std::string& path : dirs) {
        if (!std::filesystem::exists(std::filesystem::path(path) / "config.toml")) {
            continue; // an imported job's rank traces: no statistics
        }
        auto run = loadRun(path, TraceLoad::Skip); // Suggest reads these on the UI thread
        if (!run) {
            return run.error();
        }
        std::vector<double> history;
        for (const auto& batch : run->metrics) {
            if (batch.noise) {
                history.push_back(batch.noise->bSimple);
            }
        }
        // The noise scale of the run with the most estimates (a longer run's is the steadier).
        if (history.size() > noiseRecords) {
            if (auto measured = noiseScaleFromHistory(history, "run " + path)) {
                noise = std::move(measured).value();
                noiseRecords = history.size();
            }
        }
        lr.rule = run->config.optimizer.lrScaling;
        lr.baseGlobalBatch = run->config.optimizer.baseGlobalBatch;
        if (!targetLoss) {
            continue;
        }
        auto pipeline = resolvedPipeline(run->config);
        if (!pipeline) {
            return pipeline.error();
        }
        const int b = run->config.pipeline.microBatchSize;
        for (const auto& batch : run->metrics) {
            if (batch.valLoss && std::isfinite(*batch.valLoss) && *batch.valLoss <= *targetLoss) {
                int lag = 0; // the lag the run measured, at least the schedule's stated bound
                for (const auto& stage : run->metrics.back().stages) {
                    lag = std::max(lag, stage.maxLag);
                }
                for (int bound : lagBounds(pipeline->params(1))) {
                    lag = std::max(lag, bound);
                }
                reached.push_back(
                    {path, static_cast<double>(batch.step + 1) * static_cast<double>(pipeline->globalBatch(b)),
                        static_cast<double>(pipeline->batchPerUpdate(b)), lag});
                break;
            }
        }
    }
    if (dirs.empty()) {
        return makeError(ErrorCode::InvalidArgument, "noise scale: no run given to measure it",
            "--calibrate RUN_DIR (a training run records its noise scale)");
    }
    if (!noise) {
        std::string names;
        for (const std::string& path : dirs) {
            names += (names.empty() ? "" : ", ") + path;
        }
        return makeError(ErrorCode::InvalidArgument,
            "noise scale: none of the runs records one (metrics.jsonl \"noise\"): " + names,
            "--calibrate: a run directory trained with this version (two or more updates per stage)");
    }
    return GoodputModel::fit(*noise, reached, lr);
}

} // namespace bs::runtime
