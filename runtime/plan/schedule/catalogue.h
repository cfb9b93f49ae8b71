#pragma once
// Every schedule Bubblescope knows, generated as data for the requested (p, m, a, N, k), and the
// rules each one brings (its traits). Every layer asks the catalogue instead of comparing names.

#include "profiler/trace/trace_event.h"
#include "runtime/plan/schedule/limits.h"
#include "runtime/plan/schedule/schedule.h"

#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

/// When a stage applies an update.
enum class UpdateRule : std::uint8_t
{
    PerGlobalBatch, ///< after all m micro-batches of a batch (flush schedules, 2bw)
    PerMicrobatch, ///< after every backward (pipedream, async-1f1b)
    PerWindow, ///< after every a local backwards, a dividing m (paci)
};

/// What other engines (export notes) and the GUI group schedules by.
enum class ScheduleFamily : std::uint8_t
{
    Flush,
    ZeroBubble,
    Asynchronous,
    LocalAccumulation
};

/// Which generator builds a schedule's order, and so the order's own rules (its bounds, whether
/// it splits the backward): generate() and the generators switch on this, never on the name.
enum class ScheduleOrder : std::uint8_t
{
    GPipe,
    OneFOneB,
    ZeroBubbleH1,
    ZeroBubbleH2,
    AsyncOneFOneB, ///< pipedream, 2bw, async-1f1b, paci: one order, their weights and updates differ
    Interleaved1F1B,
    LoopedBfs,
    InterleavedZeroBubble,
    ZeroBubbleV,
    DualPipeV,
    PaciInterleaved,
};

struct ScheduleInfo
{
    std::string name;
    ScheduleOrder order = ScheduleOrder::OneFOneB;
    std::string displayName; ///< "PACI", "1F1B-flush": tables, legends, run labels
    std::string summary; ///< one line for `bubblescope-cli schedules` and the GUI's tooltip
    bool asynchronous = false; ///< no flush between global batches; takes an extra in-flight depth k
    ScheduleFamily family = ScheduleFamily::Flush;
    WeightPolicy weights = WeightPolicy::Flush;
    UpdateRule updates = UpdateRule::PerGlobalBatch;
    /// Two weight versions suffice only when every backward comes before the second update after
    /// its forward: microbatches >= stages + extra depth − 1 (PipeDream-2BW's m ≥ depth rule).
    bool needsMicrobatchesCoveringDepth = false;
    /// Where its stages live, and how many stages per rank it takes (v; the default when
    /// pipeline.stages_per_rank is 0). One-per-rank schedules take exactly v = 1, V schedules v = 2.
    Placement placement = Placement::OnePerRank;
    int defaultStagesPerRank = 1;
    int maxStagesPerRank = 1;
    /// Micro-batches per batch must be a multiple of the ranks p (Megatron's and PyTorch's rule
    /// for interleaved 1F1B: micro-batches go through each chunk in groups of p).
    bool needsMicrobatchesMultipleOfRanks = false;
    /// Micro-batches per batch must be at least this many times p (DualPipeV: m >= 2p).
    int minMicrobatchesPerRank = 0;
    /// The torch.distributed.pipelining class that runs this schedule ("Schedule1F1B",
    /// "ScheduleInterleaved1F1B", ...; empty when PyTorch has none). An imported torch.profiler
    /// job names its schedule this way; replays and what-ifs of it ask the catalogue, never the name.
    std::string pytorchClass = {};
    /// The synchronous schedule the others are measured against when no baseline is named
    /// (`simulate` / `compare --train` train it beside the windowed one; speed-up columns): one
    /// entry, 1f1b (flush, 1F1B's activation memory). defaultBaselineSchedule() returns it.
    bool defaultBaseline = false;
    /// Asynchronous, but its in-flight depth is its order's own: it takes no extra depth k
    /// (paci-interleaved: the interleaved-1F1B stream's warm-up sets it).
    bool fixedDepth = false;
    /// The flush schedule that runs this one's order with a flush: what an engine without this
    /// schedule runs in its place (export notes). Empty = the default baseline (1F1B-flush);
    /// paci-interleaved names interleaved-1f1b (its stream is interleaved 1F1B's, without flushes).
    std::string flushCounterpart = {};

    /// Takes an accumulation window a (pipeline.accum, --accum) other than m.
    bool takesAccumWindow() const { return updates == UpdateRule::PerWindow; }
    /// Micro-batches each update applies for m = `microbatches` and a = `accum` (0 = m).
    int updateWindow(int microbatches, int accum) const;
    /// The fewest micro-batches per global batch at p stages and extra depth k: p + k − 1 for
    /// needsMicrobatchesCoveringDepth (2bw), else 1.
    int minMicrobatches(int stages, int extraDepth) const;
    /// Whether m micro-batches per batch at p ranks and extra depth k satisfy every rule above.
    bool acceptsMicrobatches(int stages, int microbatches, int extraDepth) const
    {
        return microbatches >= minMicrobatches(stages, extraDepth)
            && (!needsMicrobatchesMultipleOfRanks || microbatches % stages == 0)
            && microbatches >= minMicrobatchesPerRank * stages;
    }
    /// The micro-batches per batch that simulate update window `window` at p ranks and extra depth
    /// k: the fewest multiple of it these rules accept (paci-interleaved at p = 4, a = 2: m = 4, two
    /// windows a batch). For a schedule without a window (a = m) a result other than `window` means
    /// `window` itself is refused, and m is the next it takes. `window` when none within the limits.
    int microbatchesForWindow(int stages, int window, int extraDepth) const;
    /// v for a request: `requested` when > 0, else defaultStagesPerRank.
    int stagesPerRank(int requested) const { return requested > 0 ? requested : defaultStagesPerRank; }
    bool multiStage() const { return placement != Placement::OnePerRank; }
    /// The most updates a micro-batch can cross at `stage` (a model stage: 0..p·v − 1) between its
    /// forward and its backward, as the method states it (paci: bs::paci::maxLag; paci-interleaved:
    /// paciInterleavedLagBound); nullopt when the schedule states none.
    std::optional<int> lagBound(const ScheduleParams& params, int stage) const;
};

/// gpipe, 1f1b, zb-h1, zb-h2, pipedream, 2bw, async-1f1b, paci, then the multi-stage ones:
/// interleaved-1f1b, looped-bfs, interleaved-zb, zb-v, dualpipev, paci-interleaved.
const std::vector<ScheduleInfo>& scheduleCatalogue();
bool isKnownSchedule(const std::string& name);
/// The catalogue entry of `name`, or nullptr when it is not a schedule.
const ScheduleInfo* findSchedule(const std::string& name);
/// The entry with ScheduleInfo::defaultBaseline (1f1b).
const ScheduleInfo& defaultBaselineSchedule();
/// The entry `info.flushCounterpart` names, else the default baseline.
const ScheduleInfo& flushCounterpartOf(const ScheduleInfo& info);
/// "paci" / "pipedream, 2bw, async-1f1b, paci": the names with a trait, for messages.
std::string scheduleNamesWhere(bool (*trait)(const ScheduleInfo&));

/// The entry whose pytorchClass is `pytorchClass`, or nullptr.
const ScheduleInfo* findScheduleByPyTorchClass(const std::string& pytorchClass);

/// What to generate to replay a job that PyTorch's `pytorchClass` ran on `ranks` ranks with
/// `stagesPerRank` stages each and `microbatches` per step: the catalogue's schedule of that class
/// on its placement, validated like makeSchedule(). Error naming the class (and the PyTorch
/// classes the catalogue knows) when none is that class, or naming the field the job breaks.
Result<ScheduleParams> paramsForPyTorchSchedule(
    const std::string& pytorchClass, int ranks, int stagesPerRank, int microbatches);

/// Most stages one rank may hold (pipeline.stages_per_rank): the trace's own limit on stages per
/// lane, so a run's v and an opened trace's are bounded alike.
inline constexpr int kMaxStagesPerRank = profiler::kMaxStagesPerLane;

/// pipeline.stages_per_rank = `v` for `info`'s placement (0: the schedule's own), as
/// makeSchedule() checks it: InvalidArgument naming the field and the values allowed.
Status checkStagesPerRank(const ScheduleInfo& info, int v);

/// How resolvePipeline() takes a micro-batch count m that does not hold whole windows of a, or that
/// the schedule's rules refuse.
enum class MicrobatchChoice : std::uint8_t
{
    AsGiven, ///< keep m: makeSchedule() and the config's validation refuse it, naming the field (CLI, config)
    WholeWindows, ///< the fewest m of whole windows the rules take (ScheduleInfo::microbatchesForWindow):
                  ///< the what-if, the tuner and a run started from them
};

/// What (schedule, p, m, a, v) mean for one schedule: the one place that interprets the
/// accumulation window a (CLI, config, GUI what-if, tuner and runs all resolve through it).
struct PipelineSettings
{
    const ScheduleInfo* info = nullptr; ///< never null in a resolved value
    int ranks = 1; ///< p
    int stagesPerRank = 1; ///< v, resolved: the schedule's own when 0 was asked
    int microbatches = 1; ///< m per global batch
    /// Micro-batches behind one update of a stage: m for flush schedules and 2bw, a for PACI's
    /// windows, 1 for per-micro-batch asynchronous schedules (pipedream, async-1f1b).
    int window = 1;
    int extraDepth = 0; ///< k

    int stages() const { return ranks * stagesPerRank; }
    /// What ScheduleParams::accum and pipeline.accum hold: the window for a schedule that takes
    /// one, else 0 (the schedule's own).
    int accum() const { return info->takesAccumWindow() ? window : 0; }
    /// The a a user sees on the window slider and in labels: the window, or m for a schedule
    /// whose update rule has no window (flush: a = m).
    int shownWindow() const { return info->takesAccumWindow() ? window : microbatches; }
    /// Samples behind one optimizer step of a stage ("batch per update"): m·b for flush schedules,
    /// a·b for PACI, b for per-micro-batch asynchronous schedules. What the learning-rate rule and
    /// the statistical model of time to target read.
    long batchPerUpdate(int microBatchSize) const { return static_cast<long>(window) * microBatchSize; }
    /// Samples per global batch: m·b.
    long globalBatch(int microBatchSize) const { return static_cast<long>(microbatches) * microBatchSize; }
    /// The generator's knobs for `batches` global batches (validated by makeSchedule()).
    ScheduleParams params(int batches) const;
};

/// Resolves (schedule, p, m, a, v, k). m = 0: from the window (a for a windowed schedule; for one
/// without a window, a is its m: "a = m here"). a = 0: m (no window beyond the batch). v = 0: the
/// schedule's own. For a schedule without a window, an a other than m is refused (AsGiven) or
/// taken as its m (WholeWindows). Errors (InvalidArgument) name the field: an unknown schedule,
/// negative values, m and a both 0, or v outside the schedule's placement.
Result<PipelineSettings> resolvePipeline(const std::string& schedule, int ranks, int microbatches, int accum,
    int stagesPerRank, int extraDepth = 0, MicrobatchChoice choice = MicrobatchChoice::AsGiven);

/// Generates and validates the named schedule. Bad parameters give ErrorCode::InvalidArgument
/// whose context names the field and the allowed values.
Result<Schedule> makeSchedule(const ScheduleParams& params);

/// makeSchedule() but its last step: the schedule as generated (with its stated lag bounds), not
/// yet validated, for a caller that validates it beside other work and returns nothing of it
/// before the verdict (simulate()). Anything else calls makeSchedule().
Result<Schedule> generateUnvalidated(const ScheduleParams& params);

/// The checks generateUnvalidated() makes of `params` before it generates (each field named).
Status checkScheduleParams(const ScheduleParams& params);

/// What makeSchedule() returns when validate() refuses what the catalogue generated (a bug in a
/// generator, ErrorCode::Internal): `why` with the schedule named.
Error generatedScheduleInvalid(const Schedule& schedule, const Error& why);

/// Stated lag bound per model stage (ScheduleInfo::lagBound; p·v of them); empty when the
/// schedule states none.
std::vector<int> lagBounds(const ScheduleParams& params);

/// PACI's drift bound: the most updates a micro-batch can cross at stage s,
/// ⌈(p − s − 1 + k) / a⌉ (bs::paci::maxLag; 0 for an invalid stage).
int paciLagBound(int stages, int stage, int accum, int extraDepth = 0);

/// paci-interleaved (p ranks, v stages each, stage s of S = p·v): D_s, the most backwards of stage
/// s between one micro-batch's forward and its backward there (its micro-batches in flight besides
/// it). In the interleaved-1F1B stream the rank runs L_s = 2(S − 1 − s) backward steps between
/// them, stage s's steps coming in blocks of p every p·v; D_s counts the most of those a window of
/// L_s steps can hold (derivation: generators_paci_interleaved.cpp, docs/ARCHITECTURE.md).
int paciInterleavedBackwardsBetween(int ranks, int stagesPerRank, int stage);
/// Its version-lag bound (a = the accumulation window): the most of ⌊i / a⌋ − ⌊(i − D_s(i mod p)) / a⌋
/// over micro-batches i, at most ⌈D_s / a⌉ (= D_s for a = 1); reached in a long stream.
int paciInterleavedLagBound(int ranks, int stagesPerRank, int stage, int accum);

} // namespace bs::runtime
