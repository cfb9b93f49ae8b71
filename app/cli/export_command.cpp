#include "app/cli/option_checks.h"
#include "app/cli/export_command.h"

#include "app/cli/cli_common.h"
#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/export/export.h"
#include "base/atomic_file.h"

#include <iostream>
#include <memory>

namespace bs::cli {

namespace {

struct ExportCommand
{
    std::string configPath;
    std::string format = "toml";
    std::string out;
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
        if (!configPath.empty()) {
            auto loaded = runtime::loadRunConfig(configPath);
            if (!loaded) {
                return reportError(loaded.error());
            }
            config = std::move(*loaded);
        }
        auto text = runtime::exportConfig(config, format, options);
        if (!text) {
            return reportError(text.error());
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
};

} // namespace

void addExportCommand(CLI::App& app, int& exitCode)
{
    auto cmd = std::make_shared<ExportCommand>();
    auto* sub = app.add_subcommand("export", "Export a run config for cluster jobs or other engines");
    sub->add_option("-c,--config", cmd->configPath, "Run config (TOML); default: the embedded demo");
    sub->add_option("-f,--format", cmd->format,
                    "toml, torchrun, slurm, pytorch-csv, megatron, deepspeed, torchtitan (--list explains each)")
        ->capture_default_str();
    sub->add_option("-o,--out", cmd->out, "Write to this file (atomically) instead of standard output");
    sub->add_option("--nodes", cmd->options.nodes, "torchrun/slurm: machines (must divide the stages)")
        ->capture_default_str()
        ->check(integerIn(1, 1024));
    sub->add_option("--config-name", cmd->options.configPath, "torchrun/slurm: file the script writes the config to")
        ->capture_default_str();
    sub->add_option("--job-name", cmd->options.jobName, "slurm: job name")->capture_default_str();
    sub->add_flag("--list", cmd->list, "List the formats and exit");
    sub->callback([cmd, &exitCode] { exitCode = cmd->run(); });
}

} // namespace bs::cli
