#pragma once
// A schedule is data: one static, ordered action list per stage. Sends and receives are implied by
// data dependencies. Because orders are static, a schedule's numerics never depend on timing.

#include "runtime/schedule/action.h"

#include <string>
#include <vector>

namespace bs::runtime {

/// How a schedule keeps the weights a backward pass sees consistent with its forward.
enum class WeightPolicy : std::uint8_t {
    Flush,      ///< synchronous: one update per global batch after every micro-batch's backward
    Stash,      ///< PipeDream: backward uses the stashed version its forward used
    TwoVersions,///< PipeDream-2BW: at most two versions, update every m micro-batches
    InPlace,    ///< async 1F1B / PACI: one copy, updated in place while older backwards are pending
};

std::string_view weightPolicyName(WeightPolicy policy);

/// The knobs every generator takes. Validated by makeSchedule() with messages naming the field.
struct ScheduleParams
{
    std::string name = "1f1b";
    int stages = 8;       ///< p
    int microbatches = 8; ///< m per global batch
    int accum = 0;        ///< a: local backward passes per update (paci); 0 = m
    int batches = 1;      ///< N global batches
    int extraDepth = 0;   ///< k: async schedules keep p - s + k micro-batches in flight at stage s
    /// Async schedules with k > 0 order their actions the way PACI's runtime would with this
    /// comm time (as a fraction of a forward): backward first, else forward if in-flight < p − s + k.
    /// The order is still static once generated, so numerics never depend on measured timing.
    double commRatio = 0.0;
};

struct Schedule
{
    ScheduleParams params;
    WeightPolicy weights = WeightPolicy::Flush;
    bool splitBackward = false; ///< I and W instead of B
    bool asynchronous = false;  ///< no flush between global batches
    /// Stated bound on micro-batches in flight (forward done, backward/input-grad not yet) per stage.
    std::vector<int> inflightBound;
    /// Stated bound on weight versions held per stage (1 = no copies).
    std::vector<int> weightVersionBound;
    std::vector<std::vector<Action>> programs; ///< programs[s]: stage s's actions in order

    int stages() const { return static_cast<int>(programs.size()); }
    int microbatchesPerBatch() const { return params.microbatches; }
    int totalMicrobatches() const { return params.microbatches * params.batches; }
    int batchOf(int microbatch) const { return microbatch / params.microbatches; }
    std::size_t actionCount() const;
};

} // namespace bs::runtime
