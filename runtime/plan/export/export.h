#pragma once
// Exports a tuned RunConfig for cluster jobs: the config itself, launch scripts that run it with
// `bubblescope-cli train --distributed`, PyTorch pipelining's schedule CSV, and the closest
// settings for engines that have no PACI (Megatron-LM, DeepSpeed, torchtitan). Torch-free.

#include "base/result.h"
#include "runtime/plan/config/run_config.h"

#include <string>
#include <vector>

namespace bs::runtime {

struct ExportFormatInfo
{
    std::string name;    ///< the --format value
    std::string summary; ///< one line: what it is and which engine version it targets
    std::string suggestedFileName;
};

/// toml, torchrun, slurm, pytorch-csv, megatron, deepspeed, torchtitan.
const std::vector<ExportFormatInfo>& exportFormats();

struct ExportOptions
{
    std::string configPath = "bubblescope.toml"; ///< where the launch scripts expect the config
    int nodes = 1;                               ///< slurm / torchrun: machines
    std::string jobName = "bubblescope";
};

/// The exported text. Errors: unknown format (lists the allowed ones); an invalid config; a
/// schedule the format cannot express (e.g. pytorch-csv of an asynchronous schedule), saying what
/// cannot be expressed and why.
Result<std::string> exportConfig(const RunConfig& config, const std::string& format, const ExportOptions& options = {});

namespace detail {
std::string torchrunScript(const RunConfig& config, const ExportOptions& options);
std::string slurmScript(const RunConfig& config, const ExportOptions& options);
std::string megatronArgs(const RunConfig& config);
std::string deepspeedConfig(const RunConfig& config);
std::string torchtitanConfig(const RunConfig& config);
} // namespace detail

} // namespace bs::runtime
