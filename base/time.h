#pragma once
// Time in the engine is integer nanoseconds: virtual time is exact, so bubble fractions computed
// from it are exact rationals and tests can compare them without tolerances.

#include <cstdint>

namespace bs {

using TimeNs = std::int64_t;

constexpr TimeNs kNsPerUs = 1'000;
constexpr TimeNs kNsPerMs = 1'000'000;
constexpr TimeNs kNsPerS = 1'000'000'000;

constexpr double toSeconds(TimeNs t) { return static_cast<double>(t) / static_cast<double>(kNsPerS); }
constexpr double toMillis(TimeNs t) { return static_cast<double>(t) / static_cast<double>(kNsPerMs); }

} // namespace bs
