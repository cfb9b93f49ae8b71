#include "app/cli/goodput_runs.h"

#include "app/cli/imported_what_if.h"
#include "runtime/plan/config/run_config.h"
#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/plan/rundir/run_loader.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/measured_costs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

namespace bs::cli {

Result<runtime::CostFit> calibrationFromRuns(
    const std::vector<std::string>& dirs, const std::string& schedule, int importedMicroBatchSize)
{
    std::vector<runtime::CostSample> samples;
    for (const std::string& path : dirs) {
        if (auto listed = profiler::kineto::listRankTraces(path);
            listed && !std::filesystem::exists(std::filesystem::path(path) / "config.toml")) {
            auto job = profiler::kineto::importKinetoJob({path});
            if (!job) {
                return job.error();
            }
            for (const std::string& warning : job->warnings) {
                std::cerr << "warning: " << path << ": " << warning << '\n';
            }
            auto measured = measuredCostsOfImportedJob(*job);
            if (!measured) {
                return measured.error();
            }
            auto own = replayParamsOf(*job); // the catalogue's schedule of the job's PyTorch class
            if (!own) {
                return own.error();
            }
            samples.push_back(
                runtime::CostSample{path, own->name, importedMicroBatchSize, std::move(measured).value()});
            continue;
        }
        auto dir = runtime::readRunDir(path);
        if (!dir) {
            return dir.error();
        }
        auto trace = runtime::readRunTrace(*dir);
        if (!trace) {
            return trace.error();
        }
        auto measured = runtime::measuredCosts(**trace, dir->config.pipeline.stages);
        if (!measured) {
            return measured.error();
        }
        samples.push_back(runtime::CostSample{
            path, dir->config.schedule.name, dir->config.pipeline.microBatchSize, std::move(measured).value()});
    }
    return runtime::fitCostsFor(samples, schedule);
}

Result<runtime::GoodputModel> goodputFromRuns(const std::vector<std::string>& dirs, std::optional<double> targetLoss)
{
    std::optional<runtime::NoiseScaleInput> noise;
    std::size_t noiseRecords = 0;
    std::vector<runtime::TargetRun> reached;
    runtime::LrRule lr;
    for (const std::string& path : dirs) {
        if (!std::filesystem::exists(std::filesystem::path(path) / "config.toml")) {
            continue; // an imported job's rank traces: no statistics
        }
        auto run = runtime::loadRun(path);
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
            if (auto measured = runtime::noiseScaleFromHistory(history, "run " + path)) {
                noise = std::move(measured).value();
                noiseRecords = history.size();
            }
        }
        lr.rule = run->config.optimizer.lrScaling;
        lr.baseGlobalBatch = run->config.optimizer.baseGlobalBatch;
        if (!targetLoss) {
            continue;
        }
        auto pipeline = runtime::resolvedPipeline(run->config);
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
                for (int bound : runtime::lagBounds(pipeline->params(1))) {
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
    return runtime::GoodputModel::fit(*noise, reached, lr);
}

} // namespace bs::cli
