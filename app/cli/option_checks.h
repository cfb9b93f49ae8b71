#pragma once
// Validators every subcommand shares, so a value past its stated limits is refused by CLI11 with
// the option's name before any work starts (exit 2): NaN and infinities where a finite number is
// meant, empty values (`--steps ''` used to mean "default"), negative counts that wrapped.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace bs::cli {

/// A finite number in [lo, hi]: refuses "nan", "inf", "1e400", "" and out-of-range values with
/// "allowed: a finite number in [lo, hi]" (and `unit`, e.g. "s", after the bounds).
CLI::Validator finiteIn(double lo, double hi, const std::string& unit = {});

/// An integer in [lo, hi] (CLI::Range's check with the product's wording).
CLI::Validator integerIn(long long lo, long long hi);

/// One of `allowed`: refuses anything else with "'x' is not allowed; allowed: a, b, c (field)",
/// naming the config field the option sets.
CLI::Validator oneOf(std::vector<std::string> allowed, const std::string& field);

/// Adds a non-empty check to every option of `app` and of its subcommands (recursively) that
/// takes a value; flags and positionals keep theirs. Call after every option is registered.
void refuseEmptyValues(CLI::App& app);

/// Seconds a wait or a grace period may be given: 1 week. Far above any real bound, and low enough
/// that seconds * 1e3 (milliseconds) or * 1e9 (nanoseconds) can never overflow 64 bits.
inline constexpr double kMaxSeconds = 7.0 * 24 * 3600;

} // namespace bs::cli
