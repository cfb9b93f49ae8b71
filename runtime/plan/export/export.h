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
    std::string name; ///< the --format value
    std::string summary; ///< one line: what it is and which engine version it targets
    std::string suggestedFileName;
};

/// toml, torchrun, slurm, pytorch-csv, megatron, deepspeed, torchtitan.
const std::vector<ExportFormatInfo>& exportFormats();

struct ExportOptions
{
    std::string configPath = "bubblescope.toml"; ///< where the launch scripts expect the config
    int nodes = 1; ///< slurm / torchrun: machines (must divide the ranks)
    std::string jobName = "bubblescope";
    /// slurm / torchrun / megatron: "cuda" (one GPU per rank, NCCL where the placement allows) or
    /// "cpu" (Gloo); "" = "cuda": a cluster job runs on GPUs, and exportChanges() says so when the
    /// config said cpu.
    std::string device = "";
    /// slurm / torchrun: the training data, "bin:PATH" (uint16 tokens), "text:PATH" or "synthetic";
    /// "" = the config's file, or none: then the script asks for DATA=... when it runs.
    std::string data = "";
};

/// The exported text. Errors: unknown format (lists the allowed ones); an invalid config; a
/// schedule the format cannot express (e.g. pytorch-csv of an asynchronous schedule), saying what
/// cannot be expressed and why; `nodes` that do not divide the ranks (slurm, torchrun); a device
/// or data spec that is not allowed (each names its field).
Result<std::string> exportConfig(const RunConfig& config, const std::string& format, const ExportOptions& options = {});

/// The config a cluster format (slurm, torchrun) embeds: `config` on options.device (cuda by
/// default, cuda:N becomes cuda: each rank takes cuda:LOCAL_RANK) and options.data when given.
RunConfig clusterConfig(const RunConfig& config, const ExportOptions& options);

/// What `format` changes from `config` or leaves for the user to fill, one line each (the CLI
/// prints them as notes, the GUI shows them); empty when the export is the config as it is.
std::vector<std::string> exportChanges(
    const RunConfig& config, const std::string& format, const ExportOptions& options = {});

struct ExportedFile
{
    std::string format;
    std::string path; ///< where it was written
};

/// Writes every format into `dir` (created if missing) under its suggested file name, atomically;
/// a format that cannot express the config (pytorch-csv of an asynchronous schedule) is skipped
/// and named in `skipped` with the reason. Errors: the config is invalid, or a file cannot be
/// written (nothing said about the files written before it).
struct ExportAllResult
{
    std::vector<ExportedFile> written;
    std::vector<std::string> skipped; ///< "format: why"
    std::vector<std::string> notes; ///< exportChanges() of every format written, "format: note"
};
Result<ExportAllResult> exportAll(const RunConfig& config, const std::string& dir, const ExportOptions& options = {});

namespace detail {
/// Both take the clusterConfig() and options whose nodes divide the ranks.
std::string torchrunScript(const RunConfig& config, const ExportOptions& options);
std::string slurmScript(const RunConfig& config, const ExportOptions& options);
/// The tensor backend a cluster job passes (--backend): nccl on CUDA with one stage per rank,
/// else gloo (NCCL's issue order per neighbour pair does not fit interleaved orders).
std::string clusterBackend(const RunConfig& config);
/// `s` as one single-quoted shell word ('\'' for a quote).
std::string shellQuote(const std::string& s);
/// `s` as one argument on an `#SBATCH` line: double-quoted, `"` and `\` escaped with `\`, the way
/// sbatch's get_argument() (slurm src/sbatch/opt.c) reads it back.
std::string sbatchQuote(const std::string& s);
std::string megatronArgs(const RunConfig& config, const ExportOptions& options = {});
std::string deepspeedConfig(const RunConfig& config);
std::string torchtitanConfig(const RunConfig& config);
} // namespace detail

} // namespace bs::runtime
