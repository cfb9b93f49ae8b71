#include "app/cli/goodput_runs.h"

#include "app/cli/imported_what_if.h"
#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/plan/sim/measured_costs.h"

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

} // namespace bs::cli
