#include "runtime/plan/common/noise_scale.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bs::runtime {

double simpleNoiseScale(double traceSigma, double gradSqNorm)
{
    if (!std::isfinite(traceSigma) || !std::isfinite(gradSqNorm) || traceSigma <= 0.0 || gradSqNorm <= 0.0) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    return traceSigma / gradSqNorm;
}

NoiseScaleEstimate combineStages(std::vector<StageNoiseScale> stages)
{
    NoiseScaleEstimate e;
    bool first = true;
    for (const StageNoiseScale& s : stages) {
        e.gradSqNorm += s.gradSqNorm;
        e.traceSigma += s.traceSigma;
        e.bSmall = first ? s.bSmall : std::min(e.bSmall, s.bSmall);
        e.bBig = first ? s.bBig : std::min(e.bBig, s.bBig);
        e.updates = first ? s.updates : std::min(e.updates, s.updates);
        first = false;
    }
    e.bSimple = simpleNoiseScale(e.traceSigma, e.gradSqNorm);
    e.stages = std::move(stages);
    return e;
}

NoiseScaleAverager::NoiseScaleAverager(int stage, double decay)
    : m_stage(stage)
    , m_decay(std::clamp(decay, 0.0, 0.999))
{}

bool NoiseScaleAverager::add(double smallSqNorm, double bSmall, double bigSqNorm, double bBig)
{
    if (!(bSmall > 0.0 && bBig > bSmall) || !std::isfinite(smallSqNorm) || !std::isfinite(bigSqNorm)
        || smallSqNorm < 0.0 || bigSqNorm < 0.0) {
        return false;
    }
    const double gradSq = (bBig * bigSqNorm - bSmall * smallSqNorm) / (bBig - bSmall);
    const double trace = (smallSqNorm - bigSqNorm) / (1.0 / bSmall - 1.0 / bBig);
    m_gradSq = m_decay * m_gradSq + (1.0 - m_decay) * gradSq;
    m_trace = m_decay * m_trace + (1.0 - m_decay) * trace;
    m_weight = m_decay * m_weight + (1.0 - m_decay);
    m_bSmall = bSmall;
    m_bBig = bBig;
    ++m_updates;
    return true;
}

StageNoiseScale NoiseScaleAverager::estimate() const
{
    StageNoiseScale s;
    s.stage = m_stage;
    s.updates = m_updates;
    s.bSmall = m_bSmall;
    s.bBig = m_bBig;
    if (m_updates > 0) {
        s.gradSqNorm = m_gradSq / m_weight;
        s.traceSigma = m_trace / m_weight;
    }
    s.bSimple = simpleNoiseScale(s.traceSigma, s.gradSqNorm);
    return s;
}

} // namespace bs::runtime
