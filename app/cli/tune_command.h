#pragma once

#include <CLI/CLI.hpp>

namespace bs::cli {

/// Registers `tune`: the GUI's Suggest search on the command line.
void addTuneCommand(CLI::App& app, int& exitCode);

} // namespace bs::cli
