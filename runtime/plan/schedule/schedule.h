#pragma once
// A schedule is data: one static, ordered action list per rank. A rank holds one stage (the
// classic schedules) or several (interleaved and V placements); its program interleaves the
// actions of all its stages. Sends and receives are implied by data dependencies between stages.
// Because orders are static, a schedule's numerics never depend on timing.

#include "runtime/plan/schedule/action.h"

#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

/// How a schedule keeps the weights a backward pass sees consistent with its forward.
enum class WeightPolicy : std::uint8_t
{
    Flush, ///< synchronous: one update per global batch after every micro-batch's backward
    Stash, ///< PipeDream: backward uses the stashed version its forward used
    TwoVersions, ///< PipeDream-2BW: at most two versions, update every m micro-batches
    InPlace, ///< async 1F1B / PACI: one copy, updated in place while older backwards are pending
};

std::string_view weightPolicyName(WeightPolicy policy);

/// How stages map to ranks (pipeline.placement). With p ranks and v stages per rank:
enum class Placement : std::uint8_t
{
    OnePerRank, ///< v = 1: stage r on rank r
    Loop, ///< stage i on rank i mod p (Megatron's virtual stages, PyTorch's "loop")
    V, ///< v = 2: rank r holds stages r and 2p − 1 − r (ZB-V, DualPipeV; PyTorch's "v")
};

std::string_view placementName(Placement placement); ///< "one-per-rank", "loop", "v"
/// nullopt for any other text.
std::optional<Placement> placementFromName(std::string_view name);
/// rankOfStage[i] for p ranks and v stages per rank under `placement`.
std::vector<int> rankOfStageFor(Placement placement, int ranks, int stagesPerRank);

/// The knobs every generator takes. Validated by makeSchedule() with messages naming the field.
struct ScheduleParams
{
    std::string name = "1f1b";
    int stages = 8; ///< p: pipeline ranks (the historic name; = stages when v = 1)
    int microbatches = 8; ///< m per global batch
    int accum = 0; ///< a: local backward passes per update (paci); 0 = m
    int batches = 1; ///< N global batches
    int extraDepth = 0; ///< k: async schedules keep p - s + k micro-batches in flight at stage s
    /// Async schedules with k > 0 order their actions the way PACI's runtime would with this
    /// comm time (as a fraction of a forward): backward first, else forward if in-flight < p − s + k.
    /// The order is still static once generated, so numerics never depend on measured timing.
    double commRatio = 0.0;
    /// v: stages (model chunks) per rank; 0 = the schedule's own (1, or 2 for multi-stage schedules).
    int stagesPerRank = 0;
    /// nullopt = the schedule's own placement; otherwise it must be the schedule's.
    std::optional<Placement> placement = std::nullopt;
};

struct Schedule
{
    ScheduleParams params;
    WeightPolicy weights = WeightPolicy::Flush;
    bool splitBackward = false; ///< I and W instead of B
    bool asynchronous = false; ///< no flush between global batches
    /// Stated bound on micro-batches in flight (forward done, backward/input-grad not yet) per rank,
    /// counted over all the rank's stages (one per stage-and-micro-batch).
    std::vector<int> inflightBound;
    /// Stated bound on activation memory per rank, in stage-micro-batches between F and the W that
    /// frees them (B, or W when the backward is split). Empty = not stated beyond inflightBound.
    std::vector<int> activationBound;
    /// Stated bound on weight versions held per rank (1 = no copies).
    std::vector<int> weightVersionBound;
    /// Stated version-lag bound per stage (ScheduleInfo::lagBound: PACI's guarantee): the most
    /// updates of a stage between a micro-batch's forward and the start of its backward there.
    /// Empty = the schedule states none. The validator proves it.
    std::vector<int> lagBound;
    /// programs[r]: rank r's actions in order (r = stage when every rank holds one stage).
    std::vector<std::vector<Action>> programs;
    Placement placement = Placement::OnePerRank;
    /// rankOfStage[i]: the rank that holds stage i. Empty = one stage per rank (stage r on rank r).
    std::vector<int> rankOfStage;

    int ranks() const { return static_cast<int>(programs.size()); }
    /// Model stages (chunks): p · v.
    int stages() const { return rankOfStage.empty() ? ranks() : static_cast<int>(rankOfStage.size()); }
    int stagesPerRank() const { return ranks() > 0 ? stages() / ranks() : 1; }
    bool onePerRank() const { return stages() == ranks(); }
    int rankOf(int stage) const { return rankOfStage.empty() ? stage : rankOfStage[static_cast<std::size_t>(stage)]; }
    int microbatchesPerBatch() const { return params.microbatches; }
    int totalMicrobatches() const { return params.microbatches * params.batches; }
    int batchOf(int microbatch) const { return microbatch / params.microbatches; }
    std::size_t actionCount() const;
};

} // namespace bs::runtime
