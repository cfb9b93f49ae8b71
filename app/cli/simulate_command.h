#pragma once

#include <CLI/CLI.hpp>

namespace bs::cli {

/// Registers `schedules`, `simulate` and `compare` on `app`. Each sets `exitCode` when it runs.
void addSimulationCommands(CLI::App& app, int& exitCode);

} // namespace bs::cli
