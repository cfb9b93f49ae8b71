#include "runtime/plan/sim/cost_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace bs::runtime {

namespace {

struct Point
{
    double b = 0;
    double t = 0;
};

// Least squares t = c + k·b with c, k >= 0. One distinct b determines only a proportional model.
AffineTime fitSeries(const std::vector<Point>& points)
{
    AffineTime fit;
    if (points.empty()) {
        return fit;
    }
    double sb = 0, st = 0;
    for (const auto& p : points) {
        sb += p.b;
        st += p.t;
    }
    const double n = static_cast<double>(points.size());
    const double mb = sb / n, mt = st / n;
    double sbb = 0, sbt = 0, var = 0, cov = 0;
    for (const auto& p : points) {
        sbb += p.b * p.b;
        sbt += p.b * p.t;
        var += (p.b - mb) * (p.b - mb);
        cov += (p.b - mb) * (p.t - mt);
    }
    if (var <= 0) { // one b: proportional, through that point
        fit.perSampleNs = mb > 0 ? mt / mb : 0;
        return fit;
    }
    fit.perSampleNs = cov / var;
    fit.fixedNs = mt - fit.perSampleNs * mb;
    if (fit.perSampleNs < 0) { // noise made larger b faster: no b dependence is the honest fit
        fit.perSampleNs = 0;
        fit.fixedNs = mt;
    } else if (fit.fixedNs < 0) { // a negative fixed cost is not physical: fit through the origin
        fit.fixedNs = 0;
        fit.perSampleNs = sbb > 0 ? sbt / sbb : 0;
    }
    return fit;
}

TimeNs rounded(double ns)
{
    return static_cast<TimeNs>(std::llround(std::max(0.0, ns)));
}

} // namespace

TimeNs AffineTime::at(int microBatchSize) const
{
    return rounded(fixedNs + perSampleNs * static_cast<double>(microBatchSize));
}

TimeNs CostFit::coldTotal() const
{
    TimeNs total = 0;
    for (const auto& s : stages) {
        total += s.cold.total();
    }
    return total;
}

std::string CostFit::describe() const
{
    std::string text = "calibrated from ";
    for (std::size_t i = 0; i < sources.size(); ++i) {
        text += (i ? ", " : "") + sources[i];
    }
    text += " (b = ";
    for (std::size_t i = 0; i < microBatchSizes.size(); ++i) {
        text += (i ? ", " : "") + std::to_string(microBatchSizes[i]);
    }
    if (affine()) {
        char error[32];
        std::snprintf(error, sizeof error, "%.1f", 100.0 * maxRelativeError);
        text += std::string("; affine in b, fit error ") + error + " %";
    } else {
        text += "; one b measured: times scale linearly in b";
    }
    if (const TimeNs cold = coldTotal(); cold > 0) {
        char ms[32];
        std::snprintf(ms, sizeof ms, "%.1f", static_cast<double>(cold) / 1e6);
        text += std::string("; first actions +") + ms + " ms once";
    }
    return text + ")";
}

Result<CostFit> fitCosts(const std::vector<CostSample>& samples)
{
    if (samples.empty()) {
        return makeError(ErrorCode::InvalidArgument, "no measured run to calibrate from", "calibration");
    }
    const std::size_t stages = samples.front().costs.stages.size();
    std::set<int> sizes;
    for (const auto& s : samples) {
        if (s.costs.stages.size() != stages || stages == 0) {
            return makeError(ErrorCode::InvalidArgument,
                s.source + " has " + std::to_string(s.costs.stages.size()) + " stages, the others "
                    + std::to_string(stages),
                "calibration: runs with the same number of stages");
        }
        if (s.microBatchSize < 1) {
            return makeError(
                ErrorCode::InvalidArgument, s.source + ": micro-batch size must be >= 1", "micro_batch_size");
        }
        sizes.insert(s.microBatchSize);
    }
    CostFit fit;
    fit.microBatchSizes.assign(sizes.begin(), sizes.end());
    fit.stages.resize(stages);
    for (std::size_t st = 0; st < stages; ++st) {
        std::vector<Point> f, i, w;
        double update = 0;
        double coldF = 0, coldI = 0, coldW = 0, coldU = 0;
        for (const auto& s : samples) {
            const StageCost& c = s.costs.stages[st];
            const double b = s.microBatchSize;
            f.push_back({b, static_cast<double>(c.forward)});
            i.push_back({b, static_cast<double>(c.backwardInput)});
            w.push_back({b, static_cast<double>(c.backwardWeight)});
            update += static_cast<double>(c.update);
            coldF += static_cast<double>(c.cold.forward);
            coldI += static_cast<double>(c.cold.backwardInput);
            coldW += static_cast<double>(c.cold.backwardWeight);
            coldU += static_cast<double>(c.cold.update);
        }
        StageFit& out = fit.stages[st];
        out.forward = fitSeries(f);
        out.backwardInput = fitSeries(i);
        out.backwardWeight = fitSeries(w);
        const double n = static_cast<double>(samples.size());
        out.update = rounded(update / n);
        out.cold = {rounded(coldF / n), rounded(coldI / n), rounded(coldW / n), rounded(coldU / n)};
    }
    double comm = 0;
    int commSamples = 0;
    for (const auto& s : samples) {
        fit.sources.push_back(s.source);
        if (s.costs.commMeasured) {
            comm += static_cast<double>(s.costs.comm);
            ++commSamples;
        }
        for (std::size_t st = 0; st < stages; ++st) {
            const StageCost& c = s.costs.stages[st];
            const StageFit& sf = fit.stages[st];
            const double measured = static_cast<double>(c.forward + c.backwardInput + c.backwardWeight);
            const double fitted = static_cast<double>(sf.forward.at(s.microBatchSize)
                + sf.backwardInput.at(s.microBatchSize) + sf.backwardWeight.at(s.microBatchSize));
            if (measured > 0) {
                fit.maxRelativeError = std::max(fit.maxRelativeError, std::abs(fitted - measured) / measured);
            }
        }
    }
    fit.comm = commSamples > 0 ? rounded(comm / commSamples) : 0;
    return fit;
}

Result<CostFit> fitCostsFor(const std::vector<CostSample>& samples, const std::string& schedule)
{
    std::vector<CostSample> own;
    std::set<int> ownSizes;
    for (const auto& s : samples) {
        if (s.schedule == schedule) {
            own.push_back(s);
            ownSizes.insert(s.microBatchSize);
        }
    }
    auto pooled = fitCosts(samples);
    if (own.empty() || ownSizes.size() >= 2 || !pooled || !pooled->affine()) {
        return own.empty() ? pooled : fitCosts(own);
    }
    // The schedule's own runs are at one b; other runs saw other b. Keep the b-shape of the pooled
    // fit but anchor it at the schedule's own measurement: scale each stage's fitted time so it
    // passes through what the schedule's runs measured at their b.
    auto anchor = fitCosts(own);
    if (!anchor) {
        return anchor.error();
    }
    const int b = *ownSizes.begin();
    CostFit fit = *pooled;
    const auto rescale = [b](AffineTime& shape, const AffineTime& at) {
        const double there = shape.fixedNs + shape.perSampleNs * b;
        const double wanted = at.fixedNs + at.perSampleNs * b;
        const double k = there > 0 ? wanted / there : 1.0;
        shape.fixedNs *= k;
        shape.perSampleNs *= k;
    };
    for (std::size_t st = 0; st < fit.stages.size(); ++st) {
        rescale(fit.stages[st].forward, anchor->stages[st].forward);
        rescale(fit.stages[st].backwardInput, anchor->stages[st].backwardInput);
        rescale(fit.stages[st].backwardWeight, anchor->stages[st].backwardWeight);
        fit.stages[st].update = anchor->stages[st].update;
        fit.stages[st].cold = anchor->stages[st].cold;
    }
    fit.sources = anchor->sources;
    fit.sources.push_back("b-shape from all runs");
    return fit;
}

CostModel withFittedTimes(CostModel model, const CostFit& fit, int microBatchSize)
{
    MeasuredCosts at;
    at.stages.resize(fit.stages.size());
    for (std::size_t s = 0; s < fit.stages.size(); ++s) {
        at.stages[s].forward = fit.stages[s].forward.at(microBatchSize);
        at.stages[s].backwardInput = fit.stages[s].backwardInput.at(microBatchSize);
        at.stages[s].backwardWeight = fit.stages[s].backwardWeight.at(microBatchSize);
        at.stages[s].update = fit.stages[s].update;
        at.stages[s].cold = fit.stages[s].cold;
    }
    at.comm = fit.comm;
    at.commMeasured = fit.comm > 0;
    return withMeasuredTimes(std::move(model), at, 1.0);
}

} // namespace bs::runtime
