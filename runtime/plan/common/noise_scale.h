#pragma once
// The gradient noise scale a training run measures for free (McCandlish et al. 2018, "An
// Empirical Model of Large-Batch Training", Appendix A; ../shared/research/goodput.md): from the
// squared norms of a small-batch gradient |G_small|² (B_small samples) and a big-batch one
// |G_big|² (B_big samples) of the same weights,
//   |G|²   ≈ (B_big |G_big|² − B_small |G_small|²) / (B_big − B_small)
//   tr(Σ)  ≈ (|G_small|² − |G_big|²) / (1/B_small − 1/B_big)
// each smoothed over updates by its own moving average, and B_simple = tr(Σ) / |G|² divided only
// afterwards (the ratio of one update's estimates is biased and noisy). A stage's parameters are a
// block of the model, so the model's |G|² and tr(Σ) are the sums over its stages.
// Samples are sequences (a micro-batch holds b of them). Plain values, no torch, no json.

#include <vector>

namespace bs::runtime {

/// One model stage's smoothed estimates (or the whole model's, NoiseScaleEstimate).
struct StageNoiseScale
{
    int stage = 0;
    double gradSqNorm = 0.0; ///< |G|², the true gradient's squared norm (smoothed; may dip below 0 early)
    double traceSigma = 0.0; ///< tr(Σ), per-sample gradient variance summed over parameters (smoothed)
    /// tr(Σ)/|G|² in samples: the simple noise scale; NaN where either estimate is not yet > 0.
    double bSimple = 0.0;
    double bSmall = 0.0; ///< samples behind one small gradient (the micro-batch, b)
    double bBig = 0.0; ///< samples behind one big gradient (a·b for PACI's windows, m·b for flush)
    int updates = 0; ///< estimates the averages hold

    bool operator==(const StageNoiseScale&) const = default;
};

/// The whole model's estimate (sums over stages) and each stage's, as metrics.jsonl's "noise" per
/// global batch and summary.json's "noise_scale" record them (run_metrics.h).
struct NoiseScaleEstimate
{
    double gradSqNorm = 0.0; ///< Σ over stages of |G|²
    double traceSigma = 0.0; ///< Σ over stages of tr(Σ)
    double bSimple = 0.0; ///< traceSigma / gradSqNorm in samples; NaN where either is not > 0
    double bSmall = 0.0; ///< the stages' B_small (the smallest where they differ)
    double bBig = 0.0; ///< the stages' B_big (the smallest where they differ)
    int updates = 0; ///< the fewest estimates any stage's averages hold
    std::vector<StageNoiseScale> stages; ///< in model-stage order

    bool operator==(const NoiseScaleEstimate&) const = default;
};

/// tr(Σ)/|G|², or NaN unless both are finite and > 0.
double simpleNoiseScale(double traceSigma, double gradSqNorm);

/// The whole model's estimate from its stages' (sums of |G|² and tr(Σ), then the ratio).
NoiseScaleEstimate combineStages(std::vector<StageNoiseScale> stages);

/// One stage's smoothing: feed it one update's |G_small|² (the mean over that update's small
/// gradients) and |G_big|²; it keeps bias-corrected exponential moving averages of the two
/// unbiased estimates (as Adam corrects its moments, so the first updates are plain means).
class NoiseScaleAverager
{
public:
    /// `decay`: weight of the past per update (0.9: about the last 10 updates count).
    explicit NoiseScaleAverager(int stage = 0, double decay = 0.9);

    /// Ignored (returns false) unless 0 < bSmall < bBig and both norms are finite and >= 0.
    bool add(double smallSqNorm, double bSmall, double bigSqNorm, double bBig);
    StageNoiseScale estimate() const;
    int updates() const { return m_updates; }

private:
    int m_stage;
    double m_decay;
    double m_gradSq = 0.0; ///< uncorrected averages
    double m_trace = 0.0;
    double m_weight = 0.0; ///< 1 − decay^updates: the bias correction
    double m_bSmall = 0.0;
    double m_bBig = 0.0;
    int m_updates = 0;
};

} // namespace bs::runtime
