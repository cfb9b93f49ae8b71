#include "app/cli/export_command.h"

#include "app/cli/cli_common.h"
#include "app/cli/option_checks.h"
#include "base/atomic_file.h"
#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/export/export.h"

#include <iostream>
#include <memory>

namespace bs::cli {

namespace {

struct ExportCommand
{
    std::string configPath;
    std::string preset;
    std::string format = "toml";
    std::string out;
    std::string outDir;
    runtime::ExportOptions options;
    bool list = false;

    int run() const
    {
        if (list) {
            for (const auto& f : runtime::exportFormats()) {
                std::printf("%-12s %s\n", f.name.c_str(), f.summary.c_str());
            }
            return kExitOk;
        }
        runtime::RunConfig config = runtime::demoConfig();
        if (!preset.empty()) {
            auto named = runtime::configPreset(preset);
            if (!named) {
                return reportError(named.error());
            }
            config = std::move(*named);
        }
        if (!configPath.empty()) {
            auto loaded = runtime::loadRunConfig(configPath);
            if (!loaded) {
                return reportError(loaded.error());
            }
            config = std::move(*loaded);
        }
        if (!outDir.empty()) {
            return writeAll(config);
        }
        auto text = runtime::exportConfig(config, format, options);
        if (!text) {
            return reportError(text.error());
        }
        for (const std::string& note : runtime::exportChanges(config, format, options)) {
            std::cerr << "note: " << note << "\n";
        }
        if (out.empty()) {
            std::cout << *text;
            return kExitOk;
        }
        if (auto status = writeFileAtomic(out, *text); !status) {
            return reportError(status.error());
        }
        std::cerr << "wrote " << out << " (" << format << ")\n";
        return kExitOk;
    }

    int writeAll(const runtime::RunConfig& config) const
    {
        auto all = runtime::exportAll(config, outDir, options);
        if (!all) {
            return reportError(all.error());
        }
        for (const auto& f : all->written) {
            std::cerr << "wrote " << f.path << " (" << f.format << ")\n";
        }
        for (const std::string& skipped : all->skipped) {
            std::cerr << "skipped " << skipped << "\n";
        }
        for (const std::string& note : all->notes) {
            std::cerr << "note: " << note << "\n";
        }
        return kExitOk;
    }
};

} // namespace

void addExportCommand(CLI::App& app, int& exitCode)
{
    auto cmd = std::make_shared<ExportCommand>();
    auto* sub = app.add_subcommand("export", "Export a run config for cluster jobs or other engines");
    sub->add_option("-c,--config", cmd->configPath, "Run config (TOML); default: the embedded demo");
    sub->add_option("--preset", cmd->preset, "Start from this config preset: demo, small, deep, gpt2-medium")
        ->excludes("--config");
    sub->add_option("-f,--format", cmd->format,
                    "toml, torchrun, slurm, pytorch-csv, megatron, deepspeed, torchtitan (--list explains each)")
        ->capture_default_str();
    sub->add_option("-o,--out", cmd->out, "Write to this file (atomically) instead of standard output");
    sub->add_option("--out-dir", cmd->outDir,
           "Write every format into this folder, each under its usual name (launch.sh, job.sbatch, ...)")
        ->excludes("--out");
    sub->add_option("--nodes", cmd->options.nodes, "torchrun/slurm: machines (must divide the stages)")
        ->capture_default_str()
        ->check(integerIn(1, 1024));
    sub->add_option("--config-name", cmd->options.configPath, "torchrun/slurm: file the script writes the config to")
        ->capture_default_str();
    sub->add_option("--job-name", cmd->options.jobName, "slurm: job name (any printable text; quoted for sbatch)")
        ->capture_default_str();
    sub->add_option("--device", cmd->options.device,
           "slurm/torchrun/megatron: cuda (default: one GPU per rank, NCCL) or cpu (Gloo); a note says "
           "what changed from the config")
        ->check(oneOf({"cuda", "cpu"}, "device"));
    sub->add_option("--data", cmd->options.data,
        "slurm/torchrun: training data, bin:PATH, text:PATH or synthetic (default: the config's file, "
        "else the script asks for DATA=...)");
    sub->add_flag("--list", cmd->list, "List the formats and exit");
    sub->callback([cmd, &exitCode] { exitCode = cmd->run(); });
}

} // namespace bs::cli
