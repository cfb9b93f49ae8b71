#include "runtime/plan/export/export.h"

#include <algorithm>
#include <utility>

#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/config/config_validate.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/csv_io.h"

namespace bs::runtime {

const std::vector<ExportFormatInfo>& exportFormats()
{
    static const std::vector<ExportFormatInfo> formats = {
        {"toml", "the run config itself (round-trips exactly)", "bubblescope.toml"},
        {"torchrun", "bash script: torchrun, one rank per stage, runs `bubblescope-cli train --distributed`", "launch.sh"},
        {"slurm", "sbatch script: nodes/GPUs/tasks, srun + torchrun rendezvous, same train command", "job.sbatch"},
        {"pytorch-csv", "per-rank action CSV for torch.distributed.pipelining / torchtitan (sync schedules, one batch)",
         "schedule.csv"},
        {"megatron", "Megatron-LM (core_r0.12) pretrain_gpt.py arguments, closest equivalent, no PACI", "megatron_args.sh"},
        {"deepspeed", "DeepSpeed (0.16) ds_config.json for PipelineModule, closest equivalent, no PACI", "ds_config.json"},
        {"torchtitan", "torchtitan (0.1) job TOML, closest equivalent, no PACI", "torchtitan.toml"},
    };
    return formats;
}

namespace {

std::string allowedFormats()
{
    std::string out;
    for (const auto& f : exportFormats()) {
        out += (out.empty() ? "" : ", ") + f.name;
    }
    return out;
}

Result<std::string> pytorchCsv(const RunConfig& config)
{
    if (isAsynchronousSchedule(config.schedule.name)) {
        return makeError(ErrorCode::Unavailable,
                         "pytorch-csv cannot express '" + config.schedule.name
                             + "': PyTorch pipelining runs every schedule as a sequence of flushed global batches "
                               "(step() = one batch, then optimizer.step() on all stages), so a schedule without a "
                               "flush, with per-stage updates inside the stream or with stashed weight versions has no "
                               "CSV form",
                         "use --format toml (bubblescope-cli train runs it) or export a synchronous schedule");
    }
    ScheduleParams params = toScheduleParams(config);
    params.batches = 1; // PyTorch's CSV describes one step(); updates are the optimizer's, outside it
    auto schedule = makeSchedule(params);
    if (!schedule) {
        return schedule.error();
    }
    Schedule withoutUpdates = *schedule;
    for (auto& program : withoutUpdates.programs) {
        std::erase_if(program, [](const Action& a) { return a.kind == ActionKind::Update; });
    }
    return scheduleToCsv(withoutUpdates);
}

} // namespace

Result<std::string> exportConfig(const RunConfig& config, const std::string& format, const ExportOptions& options)
{
    bool known = false;
    for (const auto& f : exportFormats()) {
        known = known || f.name == format;
    }
    if (!known) {
        return makeError(ErrorCode::InvalidArgument, "format: unknown export format '" + format + "'",
                         "allowed: " + allowedFormats());
    }
    if (auto status = validate(config); !status) {
        return status.error();
    }
    if (options.nodes < 1) {
        return makeError(ErrorCode::InvalidArgument, "nodes: got " + std::to_string(options.nodes), "allowed: >= 1");
    }
    // Embedded in scripts: a newline would end a header or comment line and start a command there.
    for (const auto& [field, value] : {std::pair<const char*, const std::string&>{"job-name", options.jobName},
             std::pair<const char*, const std::string&>{"config-name", options.configPath}}) {
        const bool control = std::any_of(value.begin(), value.end(),
            [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
        if (value.empty() || control) {
            return makeError(ErrorCode::InvalidArgument,
                std::string(field) + ": " + (value.empty() ? "empty" : "contains a newline or another control character"),
                "allowed: one line of printable characters");
        }
    }
    if (format == "toml") {
        return toToml(config);
    }
    if (format == "torchrun") {
        return detail::torchrunScript(config, options);
    }
    if (format == "slurm") {
        if (config.pipeline.stages % options.nodes != 0) {
            return makeError(ErrorCode::InvalidArgument,
                             "nodes: " + std::to_string(options.nodes) + " does not divide the "
                                 + std::to_string(config.pipeline.stages) + " stages (one rank per stage)",
                             "allowed: a divisor of pipeline.stages");
        }
        return detail::slurmScript(config, options);
    }
    if (format == "pytorch-csv") {
        return pytorchCsv(config);
    }
    if (format == "megatron") {
        return detail::megatronArgs(config);
    }
    if (format == "deepspeed") {
        return detail::deepspeedConfig(config);
    }
    return detail::torchtitanConfig(config);
}

} // namespace bs::runtime
