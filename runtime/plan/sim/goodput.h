#pragma once
// The statistical half of time to target (../shared/research/goodput.md): how many samples a run
// needs to reach a target loss as a function of its batch per update B and the version lag its
// schedule allows. McCandlish et al. 2018: E = E_min (1 + B / B_noise), B_noise the gradient noise
// scale a run measures (runtime/plan/common/noise_scale.h); times a staleness factor
// (1 + c)^lag whose cost c per update of lag is FITTED from runs that reached the target, never
// assumed. The cost compounds: on the oracle's grid (tests/bench/time_to_target_grid.sh, seed 7,
// with the measured noise scale) lags 1, 2, 4 and 7 cost +18, +56, +196 and +473 % samples, which
// no line in lag fits and about one factor 1.25–1.31 per update does (docs/BENCHMARKS.md).
// Predicted time to target = samples to target / steady throughput (tuner.h).
// Torch-free, Qt-free; every input says where it came from so the CLI and the GUI can show it.

#include "base/result.h"

#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

/// A measured gradient noise scale B_noise (samples = sequences) with its spread.
struct NoiseScaleInput
{
    double bNoise = 0.0; ///< > 0
    double spread = 0.0; ///< one standard deviation (the estimate's wobble over the run's late updates)
    std::string source; ///< "run runs/paci-a8"

    bool operator==(const NoiseScaleInput&) const = default;
};

/// B_noise from a run's per-batch B_simple estimates (metrics.jsonl "noise"): the mean of the last
/// half of the finite positive values, spread their standard deviation. Error when none is finite.
Result<NoiseScaleInput> noiseScaleFromHistory(const std::vector<double>& bSimplePerBatch, std::string source);

/// Several runs' noise scales as one: the mean weighted by precision (1/spread²; a spread under
/// 1 % of its mean counts as 1 %), spread 1/√Σweights. A run whose small and big gradients differ
/// little (PACI a = 2: B_big = 2 B_small) measures a far noisier estimate than one of a wider
/// window; the run with the most estimates is not the most precise. Empty input: nullopt.
std::optional<NoiseScaleInput> combineNoiseScales(const std::vector<NoiseScaleInput>& estimates);

/// One run that reached the target: what it needed and under what settings.
struct TargetRun
{
    std::string source; ///< "run runs/paci-a8"
    double samplesToTarget = 0; ///< sequences trained until the validation loss first reached the target
    double batchPerUpdate = 0; ///< B (PipelineSettings::batchPerUpdate)
    int lag = 0; ///< the most updates a micro-batch crossed (the schedule's lag bound)
};

/// The learning-rate rule the runs use (optimizer.lr_scaling, lr_scaling.h): the model holds only
/// for settings trained under the rule its runs were fitted with.
struct LrRule
{
    std::string rule = "none"; ///< "none" | "sqrt" | "linear"
    double baseGlobalBatch = 0; ///< optimizer.base_global_batch (0 = each run's own)

    bool operator==(const LrRule&) const = default;
};

/// What the what-if and each Suggest row show of one setting's time to target.
struct TimeToTargetFigures
{
    double seconds = 0; ///< samples to target / throughput; in E_min samples per (seq/s) when the model has no E_min
    double spreadSeconds = 0; ///< one standard deviation
    double efficiency = 1; ///< 1 / (1 + B / B_noise)
    double stalenessFactor = 1; ///< (1 + c)^lag
    bool inSeconds = false; ///< the model has E_min (a run reached the target); else relative
};

/// Samples to target E(B, lag) = E_min (1 + B / B_noise) (1 + c)^lag.
class GoodputModel
{
public:
    /// Without runs: E_min unknown (predictions are relative: in units of E_min) and c = 0 with a
    /// wide uncertainty (kUnfittedLagCost per update of lag).
    static GoodputModel unfitted(NoiseScaleInput noise, LrRule lr = {});
    /// Fits E_min and c to runs at the same target loss (least squares of
    /// ln(samples / (1 + B/B_noise)) on lag). One run, or runs of one lag: E_min only, c unfitted.
    /// Errors (InvalidArgument) name the run with a non-positive figure.
    static Result<GoodputModel> fit(NoiseScaleInput noise, const std::vector<TargetRun>& runs, LrRule lr = {});
    /// Where the runs that reached the target have fewer than two lags between them: E_min from
    /// those that did (none: relative predictions), the lag cost from `atLevel`, a fit of the same
    /// runs to validation loss `atLoss` (the lowest every run reached). c is one number at every
    /// loss in this model, so it carries over; describe() names the loss it was fitted at.
    /// `atLevel` must have its lag cost fitted.
    static Result<GoodputModel> fitWithLagCostAt(NoiseScaleInput noise, const std::vector<TargetRun>& atTarget,
        const GoodputModel& atLevel, double atLoss, LrRule lr = {});

    /// (1 + B / B_noise): samples needed per E_min at batch per update B.
    double batchFactor(double batchPerUpdate) const;
    /// 1 / batchFactor: the statistical efficiency of B (Pollux's with M₀ → 0).
    double efficiency(double batchPerUpdate) const { return 1.0 / batchFactor(batchPerUpdate); }
    /// (1 + c)^lag.
    double stalenessFactor(int lag) const;
    /// E(B, lag): sequences (or multiples of E_min when !hasSamplesMin()).
    double samplesToTarget(double batchPerUpdate, int lag) const;
    /// One standard deviation of samplesToTarget relative to it, from the noise scale's spread,
    /// the lag cost's and (fitted) the fit's residuals.
    double relativeSpread(double batchPerUpdate, int lag) const;
    /// Time to target at `samplesPerSecond` (a steady throughput, > 0): the one place samples
    /// become seconds, for the what-if and the tuner alike.
    TimeToTargetFigures timeToTarget(double batchPerUpdate, int lag, double samplesPerSecond) const;

    bool hasSamplesMin() const { return m_samplesMin.has_value(); }
    bool lagCostFitted() const { return m_lagCostFitted; }
    double lagCost() const { return m_lagCost; }
    const NoiseScaleInput& noise() const { return m_noise; }
    const LrRule& lr() const { return m_lr; }
    /// The validation loss the lag cost was fitted at, where not the target's (fitWithLagCostAt).
    std::optional<double> lagCostAtLoss() const { return m_lagCostAtLoss; }
    /// "noise scale 410 ± 60 from run X; staleness: lag 2 costs +4 % samples, from run X, run Y".
    std::string describe() const;

    /// Every input and fitted figure equal: the same predictions.
    bool operator==(const GoodputModel&) const = default;

    /// The lag cost's spread when no run fits it: each update of lag ± 10 % samples.
    static constexpr double kUnfittedLagCost = 0.10;

private:
    /// Least squares of ln(E_i / (1 + B_i/B_noise)) on lag_i over `runs` (none: nothing changes):
    /// E_min, the fit's spread and, where no cost is given and the runs hold two or more lags, c.
    /// One fit for fit() and fitWithLagCostAt(). Errors name the run with a non-positive figure.
    Status fitRuns(const std::vector<TargetRun>& runs, std::optional<double> fixedLagCost);

    NoiseScaleInput m_noise;
    LrRule m_lr;
    std::optional<double> m_samplesMin;
    double m_lagCost = 0.0;
    double m_lagCostSpread = kUnfittedLagCost;
    bool m_lagCostFitted = false;
    double m_fitSpread = 0.0; ///< relative rms of the fit's residuals
    std::optional<double> m_lagCostAtLoss; ///< the loss the lag cost was fitted at, where not the target
    std::vector<std::string> m_sources; ///< the runs E_min (and, at the target, the lag cost) was fitted to
    std::vector<std::string> m_lagCostSources; ///< the runs of a lag cost fitted at m_lagCostAtLoss
};

} // namespace bs::runtime
