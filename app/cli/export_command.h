#pragma once

#include <CLI/CLI.hpp>

namespace bs::cli {

/// Registers `export`: a run config as TOML, launch scripts, PyTorch CSV or other engines' settings.
void addExportCommand(CLI::App& app, int& exitCode);

} // namespace bs::cli
