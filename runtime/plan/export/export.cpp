#include "runtime/plan/export/export.h"

#include "base/atomic_file.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/config/config_validate.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/csv_io.h"

#include <algorithm>
#include <filesystem>
#include <utility>

namespace bs::runtime {

const std::vector<ExportFormatInfo>& exportFormats()
{
    static const std::vector<ExportFormatInfo> formats = {
        {"toml", "the run config itself (round-trips exactly)", "bubblescope.toml"},
        {"torchrun",
            "bash script: torchrun, one GPU rank per pipeline rank (NCCL), runs `bubblescope-cli train "
            "--distributed`; writes the config beside itself once",
            "launch.sh"},
        {"slurm",
            "sbatch script: nodes, GPUs per node from the placement, srun + torchrun rendezvous, same train command",
            "job.sbatch"},
        {"pytorch-csv", "per-rank action CSV for torch.distributed.pipelining / torchtitan (sync schedules, one batch)",
            "schedule.csv"},
        {"megatron", "Megatron-LM (core 0.16) pretrain_gpt.py launch script, closest equivalent, no PACI",
            "megatron.sh"},
        {"deepspeed", "DeepSpeed (0.19) ds_config.json for PipelineModule, closest equivalent, no PACI",
            "ds_config.json"},
        {"torchtitan", "torchtitan (0.2, the last with TOML job files) job TOML, closest equivalent, no PACI",
            "torchtitan.toml"},
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
        const bool control = std::any_of(
            value.begin(), value.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
        if (value.empty() || control) {
            return makeError(ErrorCode::InvalidArgument,
                std::string(field) + ": "
                    + (value.empty() ? "empty" : "contains a newline or another control character"),
                "allowed: one line of printable characters");
        }
    }
    if (!options.device.empty() && options.device != "cpu" && options.device != "cuda") {
        return makeError(ErrorCode::InvalidArgument, "device: unknown device '" + options.device + "'",
            "allowed: cuda (one GPU per rank), cpu");
    }
    if (format == "toml") {
        return toToml(config);
    }
    if (format == "torchrun" || format == "slurm") {
        if (config.pipeline.stages % options.nodes != 0) {
            return makeError(ErrorCode::InvalidArgument,
                "nodes: " + std::to_string(options.nodes) + " does not divide the "
                    + std::to_string(config.pipeline.stages) + " ranks (pipeline.stages: one rank each)",
                "allowed: a divisor of pipeline.stages");
        }
        const RunConfig cluster = clusterConfig(config, options);
        if (auto status = validate(cluster); !status) {
            return status.error(); // a bad --data names data.spec
        }
        return format == "torchrun" ? detail::torchrunScript(cluster, options) : detail::slurmScript(cluster, options);
    }
    if (format == "pytorch-csv") {
        return pytorchCsv(config);
    }
    if (format == "megatron") {
        return detail::megatronArgs(config, options);
    }
    if (format == "deepspeed") {
        return detail::deepspeedConfig(config);
    }
    return detail::torchtitanConfig(config);
}

RunConfig clusterConfig(const RunConfig& config, const ExportOptions& options)
{
    RunConfig out = config;
    out.device.name = options.device.empty() ? "cuda" : options.device;
    if (!options.data.empty()) {
        out.data.spec = options.data;
    }
    return out;
}

std::vector<std::string> exportChanges(const RunConfig& config, const std::string& format, const ExportOptions& options)
{
    std::vector<std::string> notes;
    if (format == "megatron") {
        const int decay = config.optimizer.totalSteps > 0 ? config.optimizer.totalSteps : config.training.steps;
        if (config.optimizer.warmupSteps >= decay) {
            notes.push_back("lr-warmup-iters: " + std::to_string(config.optimizer.warmupSteps) + " -> "
                + std::to_string(std::max(0, decay - 1)) + " (Megatron asserts warm-up < decay, "
                + std::to_string(decay) + " iterations)");
        }
        notes.push_back(
            "data: set DATA_PATH (a Megatron .bin/.idx prefix) and MEGATRON_LM (a checkout) before running");
        return notes;
    }
    if (format != "torchrun" && format != "slurm") {
        return notes;
    }
    const RunConfig cluster = clusterConfig(config, options);
    if (cluster.device.name != config.device.name) {
        notes.push_back("device: " + config.device.name + " -> " + cluster.device.name
            + (cluster.device.name == "cuda"
                    ? " (a cluster job runs on GPUs, one per rank, each on cuda:LOCAL_RANK; --device cpu "
                      "keeps the CPU)"
                    : ""));
    }
    if (parseDeviceName(cluster.device.name).cuda && config.model.dtype.empty()
        && !parseDeviceName(config.device.name).cuda) {
        notes.push_back("dtype: bf16 (CUDA's default, fp32 master weights; model.dtype = \"fp32\" keeps fp32)");
    }
    if (parseDeviceName(cluster.device.name).cuda && detail::clusterBackend(cluster) == "gloo") {
        notes.push_back("backend: gloo, not NCCL: " + std::to_string(stagesPerRankOf(cluster))
            + " stages per rank (NCCL's issue order per neighbour pair does not fit interleaved orders)");
    }
    if (cluster.data.spec != config.data.spec) {
        notes.push_back("data: " + config.data.spec + " -> " + cluster.data.spec);
    } else if (cluster.data.spec == "synthetic") {
        notes.push_back("data: the config trains on the synthetic stream; the script asks for DATA=bin:PATH (or "
                        "text:PATH) when it runs (--data PATH sets it now, --data synthetic keeps the stream)");
    }
    return notes;
}

Result<ExportAllResult> exportAll(const RunConfig& config, const std::string& dir, const ExportOptions& options)
{
    if (auto status = validate(config); !status) {
        return status.error();
    }
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        return makeError(ErrorCode::IoError, "cannot create " + dir + ": " + ec.message(), dir);
    }
    ExportAllResult result;
    for (const auto& f : exportFormats()) {
        ExportOptions o = options;
        // Not bubblescope.toml: the scripts write their config (on the GPUs) only where none is, and
        // would otherwise find the tuned one (on the device it was tuned on) beside them.
        o.configPath = "cluster.toml";
        auto text = exportConfig(config, f.name, o);
        if (!text) {
            if (text.error().code == ErrorCode::Unavailable) {
                result.skipped.push_back(f.name + ": " + text.error().message);
                continue;
            }
            return text.error();
        }
        const std::string path = (std::filesystem::path(dir) / f.suggestedFileName).string();
        if (Status written = writeFileAtomic(path, *text); !written) {
            return written.error();
        }
        result.written.push_back({f.name, path});
        for (const std::string& note : exportChanges(config, f.name, o)) {
            result.notes.push_back(f.name + ": " + note);
        }
    }
    return result;
}

} // namespace bs::runtime
