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
    if (runs.empty()) {
        return model;
    }
    // r_i = E_i / (1 + B_i / B_noise) = E_min + E_min·c · lag_i: a straight line in lag.
    std::vector<double> x, y;
    for (const TargetRun& run : runs) {
        if (!(run.samplesToTarget > 0) || !(run.batchPerUpdate > 0) || run.lag < 0) {
            return makeError(ErrorCode::InvalidArgument,
                "run " + run.source + ": samples to target, batch per update and lag must be > 0, > 0, >= 0",
                "samples " + rounded(run.samplesToTarget) + ", B " + rounded(run.batchPerUpdate) + ", lag "
                    + std::to_string(run.lag));
        }
        x.push_back(run.lag);
        y.push_back(run.samplesToTarget / model.batchFactor(run.batchPerUpdate));
        model.m_sources.push_back(run.source);
    }
    const double n = static_cast<double>(x.size());
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        mx += x[i] / n;
        my += y[i] / n;
    }
    double sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    double intercept = my, slope = 0;
    if (sxx > 0) {
        slope = sxy / sxx;
        intercept = my - slope * mx;
    }
    if (intercept <= 0) { // a fit that says stale runs need fewer samples than none: E_min from the lag-0 end
        intercept = *std::min_element(y.begin(), y.end());
        slope = 0;
    }
    model.m_samplesMin = intercept;
    double rss = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double predicted = intercept + slope * x[i];
        rss += std::pow((y[i] - predicted) / predicted, 2);
    }
    const double dof = n - (sxx > 0 ? 2.0 : 1.0);
    // One run, or two at two lags (the line through them leaves no residual): ±25 % until another
    // run confirms the fit.
    model.m_fitSpread = dof >= 1 ? std::sqrt(rss / dof) : 0.25;
    if (sxx > 0) {
        // Two runs at two lags determine the cost exactly; its spread stays the unfitted one's until
        // a third run leaves residuals to measure it by. Before, two runs kept the line's intercept
        // (E_min at lag 0) but dropped its slope, so every predicted row lacked the staleness the
        // calibration runs paid.
        model.m_lagCost = std::max(0.0, slope / intercept);
        model.m_lagCostSpread = n >= 3 ? model.m_fitSpread / std::sqrt(sxx) : kUnfittedLagCost;
        model.m_lagCostFitted = true;
    }
    return model;
}

double GoodputModel::batchFactor(double batchPerUpdate) const
{
    return 1.0 + batchPerUpdate / m_noise.bNoise;
}

double GoodputModel::stalenessFactor(int lag) const
{
    return 1.0 + m_lagCost * std::max(0, lag);
}

double GoodputModel::samplesToTarget(double batchPerUpdate, int lag) const
{
    return m_samplesMin.value_or(1.0) * batchFactor(batchPerUpdate) * stalenessFactor(lag);
}

double GoodputModel::relativeSpread(double batchPerUpdate, int lag) const
{
    // d ln E / d ln B_noise = −(B/B_noise) / (1 + B/B_noise); the lag term's ± c_spread · lag.
    const double ratio = batchPerUpdate / m_noise.bNoise;
    const double noisePart = ratio / (1.0 + ratio) * (m_noise.spread / m_noise.bNoise);
    const double lagPart = m_lagCostSpread * std::max(0, lag) / stalenessFactor(lag);
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
            + " % samples";
    } else {
        out += "not fitted (needs runs at three or more settings with different lags), factor 1 ± "
            + rounded(100.0 * kUnfittedLagCost) + " % per update of lag";
    }
    if (!m_sources.empty()) {
        out += ", from "; // each source names itself: "run DIR", "live run PACI a=8 b=8"
        for (std::size_t i = 0; i < m_sources.size(); ++i) {
            out += (i ? ", " : "") + m_sources[i];
        }
    }
    out += m_samplesMin ? "; E_min " + rounded(*m_samplesMin) + " samples"
                        : "; no run reached the target: times are relative";
    out += "; lr rule " + m_lr.rule;
    return out;
}

} // namespace bs::runtime
