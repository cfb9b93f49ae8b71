#pragma once
// All ranks of one pipeline job: the per-rank traces read, their actions recovered, their clocks
// aligned, every send matched with its receive, and the result as one TraceSnapshot in the
// profiler's own vocabulary (stage = PyTorch's stage index; compute lane = the stage's F/B/I/W and
// the rank's optimizer steps; comm lane = one Send event per matched transfer, from the moment
// both ends had posted to the moment the data arrived).

#include "base/result.h"
#include "profiler/import/action_recovery.h"
#include "profiler/trace/trace_store.h"

#include <memory>
#include <string>
#include <vector>

namespace bs::profiler::kineto {

struct RankSummary
{
    std::string file;
    int globalRank = -1;   ///< distributedInfo.rank
    int pipelineRank = 0;  ///< index in the pipeline group
    std::vector<int> stages;
    LabelSource source = LabelSource::Inferred;
    bool gpu = false;
    TimeNs clockShift = 0; ///< added to this rank's timestamps to put it on rank 0's clock
    /// When a shift was estimated: the true skew lies within clockShift ± this (half the sum of
    /// the fastest hop in each direction, which bound it from both sides). 0 when not shifted.
    TimeNs clockUncertainty = 0;
    std::size_t events = 0;
    std::size_t actions = 0;
    std::size_t unlabelledComms = 0;
};

/// One matched send → receive. Times on the aligned clock, relative to ImportedJob::origin.
struct Transfer
{
    int srcRank = 0, dstRank = 0; ///< pipeline ranks
    int srcStage = 0, dstStage = 0;
    int microbatch = -1;
    Direction direction = Direction::Activation;
    TimeNs sendPosted = 0, recvPosted = 0, arrived = 0;
    std::int64_t bytes = 0;
    std::int32_t comm = -1; ///< NCCL metadata of the sender's kernel: index into ImportedJob::comms, -1 for Gloo
    TimeNs producerEnd = -1; ///< end of the action whose output this is (-1: not found)
    /// What the scheduler core calls comm time: from the producing action's end to the arrival
    /// (sender overheads, waits for the receiver and the transfer itself). -1 when unknown.
    TimeNs hopDelay() const { return producerEnd < 0 ? -1 : std::max<TimeNs>(0, arrived - producerEnd); }
    /// The receive waited this long for the sender to post (its kernel / op ran, moving nothing).
    TimeNs recvWaiting() const { return std::max<TimeNs>(0, sendPosted - recvPosted); }
    /// The send waited this long for the receiver to post.
    TimeNs sendWaiting() const { return std::max<TimeNs>(0, recvPosted - sendPosted); }
    /// From the moment both ends had posted until the data arrived.
    TimeNs transferTime() const { return std::max<TimeNs>(0, arrived - std::max(sendPosted, recvPosted)); }
};

struct ImportedJob
{
    std::vector<RankSummary> ranks;                   ///< by pipeline rank
    std::vector<std::vector<RecoveredAction>> actions;///< per pipeline rank, aligned, relative to origin
    std::vector<Transfer> transfers;
    std::vector<CommInfo> comms;                      ///< NCCL metadata the transfers name (Transfer::comm)
    std::vector<int> rankOfStage;                     ///< stage -> pipeline rank
    std::shared_ptr<const TraceSnapshot> trace;
    int stages = 0;
    int microbatches = 0;  ///< per step: 1 + the largest forward micro-batch id
    /// The torch.distributed.pipelining class the orders and the placement point to
    /// ("ScheduleGPipe", "Schedule1F1B", "ScheduleInterleaved1F1B", "ScheduleLoopedBFS",
    /// "ScheduleInterleavedZeroBubble", "ScheduleZBVZeroBubble"; empty when none fits). PyTorch's
    /// vocabulary, not Bubblescope's: the schedule catalogue maps it (runtime/plan/schedule, pytorchClass).
    std::string pytorchSchedule;
    std::string pipelineGroup; ///< the process group the ranks form ("default_pg", "pp", ...)
    std::string backend;
    std::size_t unmatchedComms = 0; ///< sends or receives whose peer event was not found
    TimeNs origin = 0; ///< the earliest action start on the aligned clock (ns, rank 0's clock)
    /// What the import could not see, one sentence each (ranks of the job whose traces were not
    /// given); shown beside the figures, never an error.
    std::vector<std::string> warnings;
    /// A profile of several steps (torch.profiler's schedule: `ProfilerStep#N` ranges on every
    /// rank): each step imported on its own, by step number; empty for a one-step profile. The
    /// fields above are then the whole profile's (micro-batches numbered on across steps).
    std::vector<ImportedJob> steps;
    int profilerStep = -1; ///< N of `ProfilerStep#N` for a job of `steps`; -1 otherwise
};

/// The step a multi-step profile's what-ifs calibrate from: the one whose step time (first action
/// start to last action end) is the median, the lower of the two middle ones for an even count;
/// `job` itself when it has no steps.
const ImportedJob& medianStep(const ImportedJob& job);

/// First action start to last action end over all ranks (ns).
TimeNs stepTimeOf(const ImportedJob& job);

/// The rank traces in `path`: the file itself, or the *.json / *.json.gz files of a directory
/// (sorted by name). Error when none is found.
Result<std::vector<std::string>> listRankTraces(const std::string& path);

/// Imports the traces of one job (files or directories, each expanded with listRankTraces()).
/// Errors name the file (and, for a bad trace, the position): duplicate ranks, traces of
/// different world sizes, a trace with no recognisable pipeline action.
Result<ImportedJob> importKinetoJob(const std::vector<std::string>& paths);

/// Stages each rank holds (v): stages / ranks, 1 for an empty job.
int stagesPerRankOf(const ImportedJob& job);

} // namespace bs::profiler::kineto
