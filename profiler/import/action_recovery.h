#pragma once
// From one rank's Kineto events to pipeline actions: which stage ran which forward / backward of
// which micro-batch, when its compute started and ended, and every send and receive it posted.
//
// Labels, best first:
//  * `PP:<stage><F|B|I|W><mb>` annotations (torch.distributed.pipelining's runtime: interleaved,
//    zero-bubble, looped BFS, CSV schedules), on the CPU and, where a GPU ran, on its stream
//    (`gpu_user_annotation`); `PP:<s>SEND_F<mb>` etc. label the communication.
//  * `Forward <mb>` / `Backward <mb>` (ScheduleGPipe's record_function names); stage = the rank's
//    place in the pipeline group.
//  * nothing (Schedule1F1B, hand-written loops): actions are inferred from autograd. Top-level ops
//    whose autograd sequence number a later `autograd::engine::evaluate_function:` op carries
//    are forward work; the evaluate_function ops are backward work; a run of one kind not
//    interrupted by a send/recv or the optimizer is one action. Forwards are numbered in order;
//    a backward takes the micro-batch of the forward whose sequence numbers it carries.
// An action's extent is its compute, not its label: from the first compute op (or GPU kernel,
// joined through correlation ids) inside it to the last, so a wait for the input at the start of
// a `PP:1F0` or `Forward 0` range is idle time, as it is on the device.

#include "profiler/import/kineto_trace.h"

#include <string>
#include <vector>

namespace bs::profiler::kineto {

enum class Direction : std::uint8_t { Activation, Gradient };

struct RecoveredAction
{
    int stage = 0;
    EventKind kind = EventKind::Forward; ///< Forward, Backward, BackwardInput, BackwardWeight, Update
    int microbatch = -1;                 ///< Update: the rank's update index
    TimeNs start = 0, end = 0;           ///< compute extent on the rank's clock
    bool onGpu = false;                  ///< extent from GPU kernels / gpu_user_annotation
    /// Time the rank's thread then spent inside send/recv calls (c10d ops) before its next action:
    /// not compute, but not free either (set by the job import; 0 on a GPU, where launches are async).
    TimeNs commOpsAfter = 0;
};

/// One send or receive posted by this rank, with what it carried.
struct CommOp
{
    bool isSend = false;
    int stage = -1;      ///< this rank's stage that sends or receives
    int peerStage = -1;  ///< the stage on the other end
    Direction direction = Direction::Activation;
    int microbatch = -1;
    TimeNs posted = 0;   ///< the op was issued (c10d op start, NCCL kernel start)
    TimeNs completed = 0;///< data arrived / left (gloo:recv end, NCCL kernel end)
    TimeNs returned = 0; ///< the issuing c10d op returned to the caller (its end; = posted for NCCL kernels)
    std::int64_t bytes = 0;
    std::int32_t comm = -1; ///< NCCL metadata (index into RankTrace::comms), -1 for Gloo
    bool onGpu = false;
};

/// A `ProfilerStep#N` range (torch.profiler's `prof.step()`), on the rank's clock.
struct ProfilerStepRange
{
    int number = 0;
    TimeNs start = 0, end = 0;
};

enum class LabelSource : std::uint8_t { PipelineAnnotations, GPipeNames, Inferred };
std::string_view labelSourceName(LabelSource source);

struct RankActions
{
    LabelSource source = LabelSource::Inferred;
    std::vector<RecoveredAction> actions; ///< compute actions and updates, by start time
    std::vector<CommOp> comms;            ///< by posted time
    std::vector<int> stages;              ///< stages this rank ran, ascending
    std::size_t unlabelledComms = 0;      ///< sends/receives no action could be tied to
    bool gpu = false;                     ///< the trace holds GPU kernels: extents are GPU time
    std::vector<ProfilerStepRange> profilerSteps; ///< by start; empty when the profile had no schedule
};

/// `pipelineRank`: the rank's index in its pipeline group (stage of single-stage schedules).
/// Never fails: a trace with no recognisable action gives an empty list.
RankActions recoverActions(const RankTrace& trace, int pipelineRank);

} // namespace bs::profiler::kineto
