// Launch scripts for cluster jobs. Each embeds the exact config in a here-document and writes it
// next to itself on its first run only (an edited config is never overwritten), so the script alone
// reproduces the tuned run. They train on GPUs unless exported with --device cpu, and ask for the
// training data (DATA) when the export did not name a file.

#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/export/export.h"
#include "runtime/plan/schedule/catalogue.h"

#include <sstream>

namespace bs::runtime::detail {

std::string shellQuote(const std::string& s)
{
    std::string out = "'";
    for (const char c : s) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

std::string sbatchQuote(const std::string& s)
{
    // get_argument() (slurm src/sbatch/opt.c) takes a backslash before any character as that
    // character, inside quotes too, and ends the argument at an unquoted '#' or blank.
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

std::string clusterBackend(const RunConfig& config)
{
    return parseDeviceName(config.device.name).cuda && stagesPerRankOf(config) == 1 ? "nccl" : "gloo";
}

namespace {

/// Text safe inside a `#` comment line: control characters (a newline would end the comment and
/// start a command) become '?'.
std::string commentSafe(std::string s)
{
    for (char& c : s) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            c = '?';
        }
    }
    return s;
}

std::string summaryLine(const RunConfig& c)
{
    std::ostringstream out;
    out << c.schedule.name << ", p=" << c.pipeline.stages << ", m=" << c.pipeline.microbatches;
    if (const ScheduleInfo* info = findSchedule(c.schedule.name); info && info->takesAccumWindow()) {
        out << ", a=" << shownWindowOf(c);
    }
    out << ", b=" << c.pipeline.microBatchSize << ", model=" << (c.model.preset.empty() ? "custom" : c.model.preset)
        << ", device=" << c.device.name << ", backend=" << clusterBackend(c);
    return commentSafe(out.str());
}

// Writes the config on the first run only; quoted delimiter: nothing in the TOML is expanded.
// `dir` is where it goes by default (sbatch runs a copy of the script from its spool directory).
// The file name is a single-quoted word of its own: `cfg$(cmd).toml` names a file, runs nothing.
// Written under a temporary name and moved without clobbering: two nodes starting together on a
// shared filesystem never overwrite each other's (or the user's) file.
std::string embeddedConfig(const RunConfig& config, const ExportOptions& options, const std::string& dir)
{
    return "CONFIG_NAME=" + shellQuote(options.configPath)
        + "\n"
          "CONFIG=\"${CONFIG:-"
        + dir
        + "/$CONFIG_NAME}\"\n"
          "# The config is written there on the first run only and never overwritten: edit it there.\n"
          "if [[ ! -e \"$CONFIG\" ]]; then\n"
          "  cat > \"$CONFIG.tmp$$\" <<'BUBBLESCOPE_CONFIG'\n"
        + toToml(config)
        + "BUBBLESCOPE_CONFIG\n"
          "  mv -n -- \"$CONFIG.tmp$$\" \"$CONFIG\" || true\n"
          "  rm -f -- \"$CONFIG.tmp$$\"\n"
          "  echo \"wrote $CONFIG (edit it there: this script never overwrites it)\" >&2\n"
          "fi\n";
}

// The data every rank reads (`train --data` overrides the config's data.spec): the export's, or
// DATA from the environment; none at all stops the job before any rank starts.
std::string dataLines(const RunConfig& config)
{
    const bool file = config.data.spec != "synthetic";
    return std::string("# Training data, on a filesystem every node sees: bin:PATH (uint16 tokens, llm.c/nanoGPT),\n"
                       "# text:PATH (UTF-8, byte-level) or synthetic. DATA=... in the environment overrides it.\n")
        + "DATA_DEFAULT=" + (file ? shellQuote(config.data.spec) : std::string("''")) + "\n"
        + "DATA=\"${DATA:-$DATA_DEFAULT}\"\n" + "if [[ -z \"$DATA\" ]]; then\n"
        + "  echo \"error: DATA: no training data given; run with DATA=bin:/path/train.bin (uint16 tokens),\" \\\n"
        + "       \"DATA=text:/path/corpus.txt or DATA=synthetic, or export with --data\" >&2\n" + "  exit 2\n"
        + "fi\n";
}

// The GPUs this node must have, checked before torchrun starts (a rank without its GPU fails later,
// after the rendezvous, with a less direct message).
std::string gpuCheck(const RunConfig& config, const std::string& perNode)
{
    if (!parseDeviceName(config.device.name).cuda) {
        return "";
    }
    return "if command -v nvidia-smi >/dev/null; then\n"
           "  gpus=$(nvidia-smi -L | grep -c '^GPU' || true)\n"
           "  if (( gpus < "
        + perNode
        + " )); then\n"
          "    echo \"error: this node has $gpus GPU(s); the job runs "
        + perNode
        + " rank(s) per node, one GPU each\" >&2; exit 2\n"
          "  fi\n"
          "fi\n";
}

std::string trainCommand(const RunConfig& config)
{
    return "--no-python bubblescope-cli train --distributed --config \"$CONFIG\" --backend " + clusterBackend(config)
        + " --data \"$DATA\" --out \"$RUN_DIR\"";
}

} // namespace

std::string torchrunScript(const RunConfig& config, const ExportOptions& options)
{
    const int p = config.pipeline.stages;
    std::ostringstream out;
    out << "#!/usr/bin/env bash\n"
        << "# Generated by `bubblescope-cli export --format torchrun`: " << summaryLine(config) << ".\n"
        << "# One rank per pipeline rank (" << p << " ranks"
        << (parseDeviceName(config.device.name).cuda ? ", one GPU each: cuda:LOCAL_RANK" : ", on the CPU")
        << "), launched the torchrun way (RANK, WORLD_SIZE,\n"
        << "# LOCAL_RANK, MASTER_ADDR, MASTER_PORT). One machine: `bash launch.sh`. Several machines: set\n"
        << "# NNODES, NODE_RANK, MASTER_ADDR, MASTER_PORT and RUN_DIR (the same on each) and run it on each.\n"
        << "set -euo pipefail\n\n"
        << embeddedConfig(config, options, "$(dirname \"$0\")") << "\n"
        << dataLines(config) << "\n"
        << "RUN_DIR=\"${RUN_DIR:-$(dirname \"$0\")/run-$(date +%Y%m%d-%H%M%S)}\"\n"
        << "NNODES=\"${NNODES:-" << options.nodes << "}\"\n"
        << "if ! [[ \"$NNODES\" =~ ^[1-9][0-9]*$ ]] || (( " << p << " % NNODES != 0 )); then\n"
        << "  echo \"error: NNODES=$NNODES does not divide the " << p << " ranks (pipeline.stages)\" >&2; exit 2\n"
        << "fi\n"
        << "PER_NODE=$(( " << p << " / NNODES ))\n"
        << gpuCheck(config, "$PER_NODE")
        << "exec torchrun --nnodes=\"$NNODES\" --node-rank=\"${NODE_RANK:-0}\" --nproc-per-node=\"$PER_NODE\" \\\n"
        << "  --master-addr=\"${MASTER_ADDR:-127.0.0.1}\" --master-port=\"${MASTER_PORT:-29500}\" \\\n"
        << "  " << trainCommand(config) << "\n";
    return out.str();
}

std::string slurmScript(const RunConfig& config, const ExportOptions& options)
{
    const int p = config.pipeline.stages;
    const int perNode = p / options.nodes;
    const bool gpu = parseDeviceName(config.device.name).cuda;
    std::ostringstream out;
    out << "#!/bin/bash\n"
        << "#SBATCH --job-name=" << sbatchQuote(options.jobName) << "\n"
        << "#SBATCH --nodes=" << options.nodes << "\n"
        << "#SBATCH --ntasks-per-node=1\n";
    if (gpu) {
        out << "#SBATCH --gpus-per-node=" << perNode << "\n"
            << "#SBATCH --cpus-per-task=" << 4 * perNode << "\n";
    } else {
        out << "#SBATCH --cpus-per-task=" << perNode << "\n";
    }
    out << "#SBATCH --output=bubblescope-%j.out\n"
        << "# Generated by `bubblescope-cli export --format slurm`: " << summaryLine(config) << ".\n"
        << "# srun starts one torchrun per node; torchrun starts " << perNode << " rank(s) per node"
        << (gpu ? ", one GPU each," : ",") << "\n"
        << "# and meets the other nodes through a c10d rendezvous on the first node.\n"
        << "set -euo pipefail\n\n"
        << embeddedConfig(config, options, "${SLURM_SUBMIT_DIR:-.}") << "\n"
        << dataLines(config) << "\n"
        << "RUN_DIR=\"${RUN_DIR:-${SLURM_SUBMIT_DIR:-.}/run-${SLURM_JOB_ID:-local}}\"\n"
        << "nodes=( $(scontrol show hostnames \"$SLURM_JOB_NODELIST\") )\n"
        << "export MASTER_ADDR=\"${nodes[0]}\"\n"
        << "export MASTER_PORT=\"${MASTER_PORT:-29500}\"\n"
        << "srun torchrun --nnodes=\"$SLURM_NNODES\" --nproc-per-node=" << perNode << " \\\n"
        << "  --rdzv-id=\"$SLURM_JOB_ID\" --rdzv-backend=c10d --rdzv-endpoint=\"$MASTER_ADDR:$MASTER_PORT\" \\\n"
        << "  " << trainCommand(config) << "\n";
    return out.str();
}

} // namespace bs::runtime::detail
