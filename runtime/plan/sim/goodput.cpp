#include "runtime/plan/sim/goodput.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bs::runtime {

namespace {

std::string rounded(double value, int digits = 0)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, value);
    return text;
}

Status checkRun(const TargetRun& run)
{
    if (run.samplesToTarget > 0 && run.batchPerUpdate > 0 && run.lag >= 0) {
        return ok();
    }
    return makeError(ErrorCode::InvalidArgument,
        "run " + run.source + ": samples to target, batch per update and lag must be > 0, > 0, >= 0",
        "samples " + rounded(run.samplesToTarget) + ", B " + rounded(run.batchPerUpdate) + ", lag "
            + std::to_string(run.lag));
}

std::string joined(const std::vector<std::string>& names)
{
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        out += (i ? ", " : "") + names[i];
    }
    return out;
}

} // namespace

Result<NoiseScaleInput> noiseScaleFromHistory(const std::vector<double>& bSimplePerBatch, std::string source)
{
    std::vector<double> late;
    for (std::size_t i = bSimplePerBatch.size() / 2; i < bSimplePerBatch.size(); ++i) {
        if (std::isfinite(bSimplePerBatch[i]) && bSimplePerBatch[i] > 0) {
            late.push_back(bSimplePerBatch[i]);
        }
    }
    if (late.empty()) {
        return makeError(ErrorCode::InvalidArgument, "noise scale: no finite positive estimate in " + source,
            "a run of at least two updates per stage (metrics.jsonl \"noise\")");
    }
    double mean = 0;
    for (double v : late) {
        mean += v;
    }
    mean /= static_cast<double>(late.size());
    double var = 0;
    for (double v : late) {
        var += (v - mean) * (v - mean);
    }
    var = late.size() > 1 ? var / static_cast<double>(late.size() - 1) : mean * mean * 0.25; // one value: ±50 %
    return NoiseScaleInput{mean, std::sqrt(var), std::move(source)};
}

std::optional<NoiseScaleInput> combineNoiseScales(const std::vector<NoiseScaleInput>& estimates)
{
    if (estimates.size() <= 1) {
        return estimates.empty() ? std::nullopt : std::optional<NoiseScaleInput>(estimates.front());
    }
    double weights = 0, weighted = 0;
    std::vector<std::string> sources;
    for (const NoiseScaleInput& e : estimates) {
        const double spread = std::max(e.spread, 0.01 * e.bNoise);
        const double w = 1.0 / (spread * spread);
        weights += w;
        weighted += w * e.bNoise;
        sources.push_back(e.source + " (" + rounded(e.bNoise, 1) + " ± " + rounded(e.spread, 1) + ")");
    }
    return NoiseScaleInput{weighted / weights, 1.0 / std::sqrt(weights), joined(sources) + ", weighted by precision"};
}

GoodputModel GoodputModel::unfitted(NoiseScaleInput noise, LrRule lr)
{
    GoodputModel model;
    model.m_noise = std::move(noise);
    model.m_lr = std::move(lr);
    return model;
}

Result<GoodputModel> GoodputModel::fit(NoiseScaleInput noise, const std::vector<TargetRun>& runs, LrRule lr)
{
    if (!(noise.bNoise > 0) || !std::isfinite(noise.bNoise)) {
        return makeError(ErrorCode::InvalidArgument, "noise scale: got " + rounded(noise.bNoise, 3), "> 0");
    }
    GoodputModel model = unfitted(std::move(noise), std::move(lr));
    if (auto fitted = model.fitRuns(runs, std::nullopt); !fitted) {
        return fitted.error();
    }
    return model;
}

Result<GoodputModel> GoodputModel::fitWithLagCostAt(NoiseScaleInput noise, const std::vector<TargetRun>& atTarget,
    const GoodputModel& atLevel, double atLoss, LrRule lr)
{
    if (!atLevel.m_lagCostFitted) {
        return makeError(ErrorCode::InvalidArgument,
            "staleness: the runs at loss " + rounded(atLoss, 3) + " do not fit a lag cost", "runs at two or more lags");
    }
    auto model = fit(std::move(noise), {}, std::move(lr));
    if (!model) {
        return model;
    }
    model->m_lagCost = atLevel.m_lagCost;
    model->m_lagCostSpread = atLevel.m_lagCostSpread;
    model->m_lagCostFitted = true;
    model->m_lagCostAtLoss = atLoss;
    model->m_lagCostSources = atLevel.m_sources;
    model->m_fitSpread = atLevel.m_fitSpread; // relative predictions: the lag fit's spread is theirs
    if (auto fitted = model->fitRuns(atTarget, atLevel.m_lagCost); !fitted) {
        return fitted.error();
    }
    return model;
}

Status GoodputModel::fitRuns(const std::vector<TargetRun>& runs, std::optional<double> fixedLagCost)
{
    if (runs.empty()) {
        return ok();
    }
    // ln r_i = ln(E_i / (1 + B_i / B_noise)) = ln E_min + lag_i · ln(1 + c): a straight line in lag.
    std::vector<double> x, z;
    for (const TargetRun& run : runs) {
        if (auto checked = checkRun(run); !checked) {
            return checked;
        }
        x.push_back(run.lag);
        z.push_back(std::log(run.samplesToTarget / batchFactor(run.batchPerUpdate)));
        m_sources.push_back(run.source);
    }
    const double n = static_cast<double>(x.size());
    double mx = 0, mz = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        mx += x[i] / n;
        mz += z[i] / n;
    }
    double sxx = 0, sxz = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxz += (x[i] - mx) * (z[i] - mz);
    }
    // The slope is fitted where the runs hold two or more lags and no cost is given. A fit that
    // says stale runs need fewer samples than fresh ones: no lag cost, E_min their geometric mean.
    const bool slopeFitted = !fixedLagCost && sxx > 0;
    const double slope = fixedLagCost ? std::log(1.0 + *fixedLagCost) : (slopeFitted ? std::max(0.0, sxz / sxx) : 0.0);
    const double intercept = mz - slope * mx;
    m_samplesMin = std::exp(intercept);
    double rss = 0; // in ln samples: relative residuals
    for (std::size_t i = 0; i < x.size(); ++i) {
        rss += std::pow(z[i] - intercept - slope * x[i], 2);
    }
    const double dof = n - (slopeFitted ? 2.0 : 1.0);
    // One run, or two at two lags (the line through them leaves no residual): ±25 % until another
    // run confirms the fit.
    m_fitSpread = dof >= 1 ? std::sqrt(rss / dof) : 0.25;
    if (slopeFitted) {
        // Two runs at two lags determine the cost exactly; its spread stays the unfitted one's until
        // a third run leaves residuals to measure it by (the slope's standard error, as a factor).
        m_lagCost = std::exp(slope) - 1.0;
        m_lagCostSpread = n >= 3 ? (1.0 + m_lagCost) * m_fitSpread / std::sqrt(sxx) : kUnfittedLagCost;
        m_lagCostFitted = true;
    }
    return ok();
}

double GoodputModel::batchFactor(double batchPerUpdate) const
{
    return 1.0 + batchPerUpdate / m_noise.bNoise;
}

double GoodputModel::stalenessFactor(int lag) const
{
    return std::pow(1.0 + m_lagCost, std::max(0, lag));
}

double GoodputModel::samplesToTarget(double batchPerUpdate, int lag) const
{
    return m_samplesMin.value_or(1.0) * batchFactor(batchPerUpdate) * stalenessFactor(lag);
}

double GoodputModel::relativeSpread(double batchPerUpdate, int lag) const
{
    // d ln E / d ln B_noise = −(B/B_noise) / (1 + B/B_noise); d ln E / d c = lag / (1 + c).
    const double ratio = batchPerUpdate / m_noise.bNoise;
    const double noisePart = ratio / (1.0 + ratio) * (m_noise.spread / m_noise.bNoise);
    const double lagPart = m_lagCostSpread * std::max(0, lag) / (1.0 + m_lagCost);
    return std::sqrt(noisePart * noisePart + lagPart * lagPart + m_fitSpread * m_fitSpread);
}

TimeToTargetFigures GoodputModel::timeToTarget(double batchPerUpdate, int lag, double samplesPerSecond) const
{
    TimeToTargetFigures out;
    out.efficiency = efficiency(batchPerUpdate);
    out.stalenessFactor = stalenessFactor(lag);
    out.seconds = samplesToTarget(batchPerUpdate, lag) / samplesPerSecond;
    out.spreadSeconds = out.seconds * relativeSpread(batchPerUpdate, lag);
    out.inSeconds = hasSamplesMin();
    return out;
}

std::string GoodputModel::describe() const
{
    std::string out = "noise scale " + rounded(m_noise.bNoise) + " ± " + rounded(m_noise.spread) + " from "
        + m_noise.source + "; staleness: ";
    if (m_lagCostFitted) {
        out += "lag 1 costs +" + rounded(100.0 * m_lagCost, 1) + " ± " + rounded(100.0 * m_lagCostSpread, 1)
            + " % samples, compounding (lag 4: ×" + rounded(stalenessFactor(4), 2) + ")";
    } else {
        out += "not fitted (needs runs at two or more lags), factor 1 ± " + rounded(100.0 * kUnfittedLagCost)
            + " % per update of lag";
    }
    // Each source names itself: "run DIR", "live run PACI a=8 b=8".
    if (m_lagCostAtLoss) {
        out += " at validation loss " + rounded(*m_lagCostAtLoss, 3)
            + " (the lowest every run reached; too few lags reached the target), from " + joined(m_lagCostSources);
        out += m_samplesMin ? "; E_min " + rounded(*m_samplesMin) + " samples from " + joined(m_sources)
                            : "; no run reached the target: times are relative";
    } else {
        out += m_sources.empty() ? "" : ", from " + joined(m_sources);
        out += m_samplesMin ? "; E_min " + rounded(*m_samplesMin) + " samples"
                            : "; no run reached the target: times are relative";
    }
    out += "; lr rule " + m_lr.rule;
    return out;
}

} // namespace bs::runtime
