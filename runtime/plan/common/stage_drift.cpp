#include "runtime/plan/common/stage_drift.h"

#include <algorithm>
#include <map>

namespace bs::runtime {

RunDrift runDrift(const std::vector<StageMetrics>& stages, const std::vector<int>& rankOfStage)
{
    RunDrift out;
    const bool placed = rankOfStage.size() >= stages.size();
    std::map<int, int> chunksSeen; // rank -> stages of it so far
    double weighted = 0.0;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        const StageMetrics& m = stages[i];
        StageDrift d;
        d.stage = static_cast<int>(i);
        d.rank = placed ? rankOfStage[i] : d.stage;
        d.chunk = chunksSeen[d.rank]++;
        d.maxLag = m.maxLag;
        d.samples = std::max<std::int64_t>(0, m.driftSamples);
        d.meanDrift = m.meanDrift;
        d.maxDrift = m.maxDrift;
        out.samples += d.samples;
        weighted += m.meanDrift * static_cast<double>(d.samples);
        out.maxDrift = std::max(out.maxDrift, d.maxDrift);
        out.maxLag = std::max(out.maxLag, d.maxLag);
        out.stages.push_back(d);
    }
    out.meanDrift = out.samples > 0 ? weighted / static_cast<double>(out.samples) : 0.0;
    return out;
}

} // namespace bs::runtime
