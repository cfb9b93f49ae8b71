#pragma once
// PACI's drift bound and the accumulation window that keeps it small. Header-only, no torch.
//
// At stage s of an asynchronous 1F1B pipeline with p stages that keeps p − s + k micro-batches in
// flight, a micro-batch's backward starts after at most p − s − 1 + k other local backward passes
// that followed its forward. The stage updates after every a backward passes, so the micro-batch
// crosses at most ⌈(p − s − 1 + k) / a⌉ updates ("version lag").

namespace bs::paci {

/// Most optimizer updates a micro-batch can cross at `stage` (0-based) between its forward and the
/// start of its backward: ⌈(p − s − 1 + k) / a⌉. Preconditions: stages ≥ 1, 0 ≤ stage < stages,
/// accum ≥ 1, extraDepth ≥ 0; returns −1 when they do not hold.
constexpr int maxLag(int stages, int stage, int accum, int extraDepth = 0)
{
    if (stages < 1 || stage < 0 || stage >= stages || accum < 1 || extraDepth < 0) {
        return -1;
    }
    const int crossed = stages - stage - 1 + extraDepth;
    return (crossed + accum - 1) / accum;
}

/// Worst lag over all stages (stage 0 has the deepest pipeline behind it).
constexpr int maxLagAnyStage(int stages, int accum, int extraDepth = 0)
{
    return maxLag(stages, 0, accum, extraDepth);
}

/// Smallest accumulation window a ≥ 1 such that no micro-batch at `stage` crosses more than
/// `maxUpdates` updates: ⌈(p − s − 1 + k) / maxUpdates⌉ (at least 1). Use stage 0 for the whole
/// pipeline. Returns −1 for maxUpdates < 0, or maxUpdates == 0 when any lag is possible
/// (no finite window gives zero lag unless p − s − 1 + k == 0).
constexpr int minAccumForLag(int stages, int stage, int maxUpdates, int extraDepth = 0)
{
    if (stages < 1 || stage < 0 || stage >= stages || extraDepth < 0 || maxUpdates < 0) {
        return -1;
    }
    const int crossed = stages - stage - 1 + extraDepth;
    if (crossed == 0) {
        return 1;
    }
    if (maxUpdates == 0) {
        return -1;
    }
    const int a = (crossed + maxUpdates - 1) / maxUpdates;
    return a < 1 ? 1 : a;
}

} // namespace bs::paci
