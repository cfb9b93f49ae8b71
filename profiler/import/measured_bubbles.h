#pragma once
// Measured bubbles of an imported job, per rank: the idle time of each rank's compute stream by
// cause (the same attribution profiler/analysis gives built-in runs), and each rank's time in
// sends and receives split into transfer and waiting for the peer.

#include "profiler/analysis/analyze.h"
#include "profiler/import/job_import.h"

#include <array>
#include <vector>

namespace bs::profiler::kineto {

struct RankBubbles
{
    int rank = 0;
    std::vector<int> stages;
    TimeNs busy = 0; ///< F/B/I/W and optimizer time on the compute stream
    TimeNs idle = 0; ///< makespan − busy
    std::array<TimeNs, kBubbleCauseCount> idleByCause{};
    double bubbleFraction = 0;
    TimeNs recvTransfer = 0, recvWaiting = 0; ///< receives: data moving / waiting for the sender to post
    TimeNs sendTransfer = 0, sendWaiting = 0; ///< sends: data moving / waiting for the receiver to post
    int transfersIn = 0, transfersOut = 0;
};

struct JobBubbles
{
    TimeNs makespan = 0;       ///< first action start to last action end, over all ranks
    double bubbleFraction = 0; ///< idle / (ranks · makespan)
    std::array<TimeNs, kBubbleCauseCount> idleByCause{};
    std::vector<RankBubbles> ranks;
    std::vector<BubbleSpan> spans; ///< idle spans by rank (BubbleSpan::stage holds the rank)
    Report stageReport;            ///< analyze() of the imported trace, per stage
};

/// Options describing an imported job to analyze(): m from the job, flush schedules (PyTorch's
/// schedules all flush at the step boundary).
AnalysisOptions analysisOptionsFor(const ImportedJob& job);

/// Per rank: a rank with one stage is exactly that stage's analysis; a rank with several stages
/// is idle where all its stages are, and such a span takes the cause of the stage whose wait is
/// most specific (comm, then dependency, flush, warm-up, drain).
JobBubbles measureBubbles(const ImportedJob& job);

} // namespace bs::profiler::kineto
