#pragma once
// TOML I/O for RunConfig. Reading is strict: unknown tables and keys are errors that name the key
// and the table, wrong types name the expected type. Ranges are checked by validate(), not here,
// so a config that parses may still be invalid.

#include "base/result.h"
#include "runtime/plan/config/run_config.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace bs::runtime {

/// Parses TOML text. Keys absent from the text keep their defaults; `[model] preset` loads the
/// preset's shape first and explicit shape keys override it. Errors: ParseError (syntax, wrong
/// type, unknown key) or InvalidArgument (unknown preset); context is "sourceName:line:column".
Result<RunConfig> parseRunConfig(std::string_view toml, std::string_view sourceName = "config");

/// Largest config file accepted (real ones are a few KiB).
inline constexpr std::uint64_t kMaxConfigFileBytes = std::uint64_t{4} << 20;

/// Reads and parses `path`. IoError naming the file when it cannot be read, is not a regular
/// file (a directory, a FIFO, /dev/zero) or is larger than kMaxConfigFileBytes.
Result<RunConfig> loadRunConfig(const std::filesystem::path& path);

/// Writes every field (defaults included), one table per section, so the file documents the run
/// completely. Exact round-trip: parseRunConfig(toToml(c)) == c for every c whose model.preset
/// is "" or a known preset, including doubles (shortest round-trip form) and strings (escaped).
std::string toToml(const RunConfig& config);

} // namespace bs::runtime
