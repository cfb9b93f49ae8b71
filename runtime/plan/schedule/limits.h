#pragma once
// One limits table for the pipeline's shape. The schedule generator, the config validator, the CLI
// flags and the per-stage memory tracker read these, so a value that passes one check cannot fail
// a later one. Sanity bounds: far above anything that runs, low enough to catch typos.

namespace bs::runtime::limits {

inline constexpr int kMaxStages = 256; ///< p (the memory tracker has one slot per stage)
inline constexpr int kMaxMicrobatches = 65536; ///< m per global batch; also a and b
inline constexpr int kMaxBatches = 1'000'000; ///< global batches one schedule is generated for
inline constexpr long kMaxActions = 50'000'000; ///< 3·p·m·N: keeps a typo like --batches 1e9 from eating the machine

} // namespace bs::runtime::limits
