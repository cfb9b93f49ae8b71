// bubblescope-cli: the headless face of Bubblescope. Links no Qt.

#include "app/cli/analyze_command.h"
#include "app/cli/cli_common.h"
#include "app/cli/export_command.h"
#include "app/cli/launch_command.h"
#include "app/cli/option_checks.h"
#include "app/cli/partition_command.h"
#include "app/cli/simulate_command.h"
#include "app/cli/stop_signals.h"
#include "app/cli/tune_command.h"
#ifdef BS_WITH_TORCH
#include "app/cli/train_command.h"
#include "runtime/train/exec/unit_profile.h"
#endif

#include <CLI/CLI.hpp>
#include <iostream>

#ifndef BUBBLESCOPE_VERSION
#define BUBBLESCOPE_VERSION "0.0.0"
#endif

int main(int argc, char** argv)
{
    bs::cli::installStopSignals(); // before any work: see stop_signals.h
    CLI::App app{"Bubblescope: see and tune pipeline-parallel training (PACI, 1F1B, GPipe, zero-bubble)",
                 "bubblescope-cli"};
    app.set_version_flag("--version", std::string("bubblescope-cli ") + BUBBLESCOPE_VERSION);
    app.require_subcommand(1);
    app.footer("Exit codes: 0 done; 1 failed while running (diverged, a rank died, nothing fits); 2 bad input or "
               "refused (an option value, a flag that does not apply, a file that cannot be read, parsed or written); "
               "130 / 143 a run stopped by SIGINT / SIGTERM (its run directory keeps everything up to the stop).\n"
               "Output files (--trace, --csv, --perfetto, -o, run directories) replace a regular file atomically (temp "
               "file + rename; a symlink's target is replaced and the link kept); a device, FIFO, socket or directory "
               "named as an output is refused with exit 2.");
    int exitCode = bs::cli::kExitOk;
    bs::cli::TrainComparison trainComparison;
#ifdef BS_WITH_TORCH
    trainComparison = bs::cli::runTrainComparison;
#endif
    bs::cli::addSimulationCommands(app, exitCode, trainComparison);
    bs::cli::addExportCommand(app, exitCode);
    bs::cli::addTuneCommand(app, exitCode);
    bs::cli::addLaunchCommand(app, exitCode);
    bs::cli::addAnalyzeCommand(app, exitCode);
    bs::cli::MeasureUnits measureUnits;
#ifdef BS_WITH_TORCH
    measureUnits = bs::runtime::measureLayerUnits; // the training runtime module's profiling pass
#endif
    bs::cli::addPartitionCommand(app, exitCode, measureUnits);
#ifdef BS_WITH_TORCH
    bs::cli::addTrainCommand(app, exitCode);
#endif
    bs::cli::refuseEmptyValues(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "error: " << e.what() << "\n  hint: bubblescope-cli --help, or bubblescope-cli <command> --help\n";
        return bs::cli::kExitUsage;
    }
    return exitCode;
}
