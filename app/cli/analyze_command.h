#pragma once

#include <CLI/CLI.hpp>

namespace bs::cli {

/// Registers `analyze TRACE...`: torch.profiler traces of every rank of a pipeline job -> measured
/// bubbles per rank (table or --json), send/recv split into transfer and waiting, --perfetto FILE,
/// and the calibrated what-if (--what-if SCHEDULE[:M], repeatable).
void addAnalyzeCommand(CLI::App& app, int& exitCode);

} // namespace bs::cli
