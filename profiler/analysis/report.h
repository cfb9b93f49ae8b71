#pragma once
// What analysis derives from a trace: makespan, bubbles by cause, in-flight micro-batches, memory,
// version lag. Plain value types: the CLI prints them, the UI shows them, tests compare them.

#include "profiler/trace/trace_event.h"

#include <array>
#include <map>
#include <vector>

namespace bs::profiler {

/// Why a stage's compute lane was idle.
enum class BubbleCause : std::uint8_t {
    WarmUp,     ///< before the stage's first action
    Drain,      ///< after the stage's last action
    Flush,      ///< synchronous schedules: between a global batch's last forward and the next one's first
    Dependency, ///< waiting for an activation or gradient still being computed upstream/downstream
    Comm,       ///< waiting for an activation or gradient in transit
};
constexpr int kBubbleCauseCount = 5;
std::string_view bubbleCauseName(BubbleCause cause);

/// What the analysis needs to know about the run that the events alone do not say.
struct AnalysisOptions
{
    int microbatchesPerBatch = 1;    ///< m: maps micro-batch ids to global batches
    bool synchronous = true;         ///< flush schedules: gaps between batches count as Flush
    bool stashesWeights = false;     ///< backward uses the forward's version (PipeDream, 2BW)
    /// Per-stage memory model; empty vectors = micro-batch units (activation 1, no static bytes).
    std::vector<std::int64_t> staticBytes;     ///< params + grads + optimizer state
    std::vector<std::int64_t> paramBytes;      ///< one weight copy (for stashed versions)
    std::vector<std::int64_t> activationBytes; ///< per in-flight micro-batch
    /// Settings changed during the run (a live Apply): from `firstMicrobatch` on, global batches
    /// have `microbatchesPerBatch` micro-batches and flush (`synchronous`) or not. Sorted, each at
    /// a batch boundary of the settings before it. Empty: the two fields above hold throughout.
    struct Segment
    {
        int firstMicrobatch = 0;
        int microbatchesPerBatch = 1;
        bool synchronous = true;
    };
    std::vector<Segment> laterSettings;
};

/// One idle span of a stage's compute lane and why it happened.
struct BubbleSpan
{
    TimeNs start = 0;
    TimeNs end = 0;
    int stage = 0;
    BubbleCause cause = BubbleCause::Dependency;
};

struct StageReport
{
    int stage = 0;
    TimeNs busy = 0;
    TimeNs idle = 0;
    TimeNs span = 0;           ///< from the stage's first action's start to its last action's end
    std::array<TimeNs, kBubbleCauseCount> idleByCause{};
    double bubbleFraction = 0; ///< idle / makespan
    int peakInflight = 0;      ///< micro-batches with F done and B/I not yet started
    int peakWeightVersions = 1;
    std::int64_t peakMemoryBytes = 0;
    int maxVersionLag = 0;
    std::map<int, int> versionLagHistogram; ///< lag -> micro-batches
    std::array<TimeNs, 5> busyByKind{};     ///< F, B, I, W, U
};

struct Report
{
    int stages = 0;
    TimeNs makespan = 0;       ///< first event start to last event end
    TimeNs totalIdle = 0;
    double bubbleFraction = 0; ///< totalIdle / (stages · makespan)
    TimeNs steadyStart = 0, steadyEnd = 0; ///< window excluding the first and last global batch
    double steadyBubbleFraction = 0;
    TimeNs steadyBusy = -1; ///< busy time of all stages inside the steady window; -1: there is none
    /// The zero-bubble authors' bubble rate (Qi et al. 2023): (cost − mean busy) / cost, with cost
    /// the longest per-stage span; a stage's staggered start and end are not bubble here.
    double spanBubbleFraction = 0;
    double utilization = 0;    ///< 1 − bubbleFraction
    int microbatches = 0;      ///< distinct micro-batches seen at stage 0's forward
    std::array<TimeNs, kBubbleCauseCount> idleByCause{};
    std::vector<StageReport> perStage;
    /// Every idle span, per stage in time order (stages in order): the spans of one cause on one
    /// stage add up to that StageReport's idleByCause exactly.
    std::vector<BubbleSpan> bubbles;
};

} // namespace bs::profiler
