#include "runtime/plan/schedule/catalogue.h"

#include "runtime/plan/schedule/generators.h"
#include "runtime/plan/schedule/validate.h"

#include <bubblescope/paci/lag_bound.h>

#include <algorithm>

namespace bs::runtime {

namespace {

using limits::kMaxActions;
using limits::kMaxBatches;
using limits::kMaxMicrobatches;
using limits::kMaxStages;

std::string allowedNames()
{
    return scheduleNamesWhere([](const ScheduleInfo&) { return true; });
}

Error badParam(const std::string& field, const std::string& message, const std::string& allowed)
{
    return makeError(ErrorCode::InvalidArgument, field + ": " + message, "allowed: " + allowed);
}

// pipeline.stages_per_rank, pipeline.placement and the micro-batch rules that come with them.
Status checkPlacement(const ScheduleInfo& info, const ScheduleParams& params)
{
    if (Status v = checkStagesPerRank(info, params.stagesPerRank); !v) {
        return v;
    }
    if (params.placement && *params.placement != info.placement) {
        return badParam("placement",
            "got '" + std::string(placementName(*params.placement)) + "' for " + params.name
                + ", which places its stages '" + std::string(placementName(info.placement)) + "'",
            std::string(placementName(info.placement)) + " for " + params.name);
    }
    const int p = params.stages;
    if (info.needsMicrobatchesMultipleOfRanks && params.microbatches % p != 0) {
        return badParam("microbatches",
            "got " + std::to_string(params.microbatches) + " for " + params.name
                + ": micro-batches go through each chunk in groups of p = " + std::to_string(p),
            "a multiple of stages (" + std::to_string(p) + ")");
    }
    if (info.minMicrobatchesPerRank > 0 && params.microbatches < info.minMicrobatchesPerRank * p) {
        return badParam("microbatches",
            "got " + std::to_string(params.microbatches) + " for " + params.name + " at " + std::to_string(p)
                + " ranks",
            ">= " + std::to_string(info.minMicrobatchesPerRank)
                + " x stages = " + std::to_string(info.minMicrobatchesPerRank * p));
    }
    return ok();
}

} // namespace

Status checkStagesPerRank(const ScheduleInfo& info, int v)
{
    const int least = info.placement == Placement::Loop ? 2 : info.defaultStagesPerRank;
    if (v != 0 && (v < least || v > info.maxStagesPerRank)) {
        const std::string allowed = least == info.maxStagesPerRank
            ? std::to_string(least) + " (or 0 for the schedule's own)"
            : std::to_string(least) + ".." + std::to_string(info.maxStagesPerRank) + " (or 0 for the schedule's own, "
                + std::to_string(info.defaultStagesPerRank) + ")";
        return badParam("stages-per-rank", "got " + std::to_string(v) + " for " + info.name, allowed);
    }
    return ok();
}

Status checkScheduleParams(const ScheduleParams& params)
{
    const ScheduleInfo* info = findSchedule(params.name);
    if (!info) {
        return badParam("schedule", "unknown schedule '" + params.name + "'", allowedNames());
    }
    if (params.stages < 1 || params.stages > kMaxStages) {
        return badParam("stages", "got " + std::to_string(params.stages), "1.." + std::to_string(kMaxStages));
    }
    if (params.microbatches < 1 || params.microbatches > kMaxMicrobatches) {
        return badParam(
            "microbatches", "got " + std::to_string(params.microbatches), "1.." + std::to_string(kMaxMicrobatches));
    }
    if (params.batches < 1 || params.batches > kMaxBatches) {
        return badParam("batches", "got " + std::to_string(params.batches), "1.." + std::to_string(kMaxBatches));
    }
    if (params.accum < 0) {
        return badParam("accum", "got " + std::to_string(params.accum), ">= 1, or 0 for 'same as microbatches'");
    }
    const bool window = info->takesAccumWindow();
    if (params.accum != 0 && !window && params.accum != params.microbatches) {
        return badParam("accum",
            "only the " + scheduleNamesWhere([](const ScheduleInfo& i) { return i.takesAccumWindow(); })
                + " schedules take an accumulation window (got " + std::to_string(params.accum) + " for " + params.name
                + ")",
            "0 or " + std::to_string(params.microbatches) + " (= microbatches) for " + params.name);
    }
    if (window && params.accum != 0 && params.microbatches % params.accum != 0) {
        return badParam("accum",
            "the accumulation window " + std::to_string(params.accum) + " must divide microbatches "
                + std::to_string(params.microbatches) + " so every update applies whole windows",
            "a divisor of " + std::to_string(params.microbatches));
    }
    if (params.extraDepth < 0 || (params.extraDepth > 0 && (!info->asynchronous || info->fixedDepth))) {
        return badParam("extra-depth", "got " + std::to_string(params.extraDepth) + " for " + params.name,
            info->asynchronous && !info->fixedDepth
                ? ">= 0"
                : "0 (only asynchronous schedules with a free depth take an extra in-flight depth: "
                    + scheduleNamesWhere([](const ScheduleInfo& i) { return i.asynchronous && !i.fixedDepth; }) + ")");
    }
    if (const int least = info->minMicrobatches(params.stages, params.extraDepth); params.microbatches < least) {
        return badParam("microbatches",
            "got " + std::to_string(params.microbatches) + " for " + params.name
                + ": two weight versions need every backward before the second update after its forward",
            ">= stages + extra depth - 1 = " + std::to_string(least));
    }
    if (Status shape = checkPlacement(*info, params); !shape) {
        return shape;
    }
    const long actions =
        3L * params.stages * info->stagesPerRank(params.stagesPerRank) * params.microbatches * params.batches;
    if (actions > kMaxActions) {
        return badParam("batches",
            "stages x microbatches x batches is too large (" + std::to_string(actions) + " actions)",
            "at most " + std::to_string(kMaxActions) + " actions");
    }
    return ok();
}

namespace {

Schedule generate(const ScheduleInfo& info, ScheduleParams params)
{
    switch (info.order) {
    case ScheduleOrder::GPipe:
        return detail::makeGpipe(params);
    case ScheduleOrder::OneFOneB:
        return detail::makeOneFOneB(params);
    case ScheduleOrder::ZeroBubbleH1:
        return detail::makeZeroBubble(params, false);
    case ScheduleOrder::ZeroBubbleH2:
        return detail::makeZeroBubble(params, true);
    case ScheduleOrder::AsyncOneFOneB:
        break;
    case ScheduleOrder::Interleaved1F1B:
    case ScheduleOrder::LoopedBfs:
    case ScheduleOrder::InterleavedZeroBubble:
    case ScheduleOrder::ZeroBubbleV:
    case ScheduleOrder::DualPipeV:
        return detail::makeMultiStage(params, info.order);
    case ScheduleOrder::PaciInterleaved:
        return detail::makePaciInterleaved(params, info.updateWindow(params.microbatches, params.accum));
    }
    const int every = info.updateWindow(params.microbatches, params.accum);
    if (info.updates == UpdateRule::PerMicrobatch) {
        params.accum = 1; // updates after every backward
    }
    return detail::makeAsyncOneFOneB(params, every, info.weights);
}

} // namespace

int ScheduleInfo::updateWindow(int microbatches, int accum) const
{
    switch (updates) {
    case UpdateRule::PerGlobalBatch:
        return microbatches;
    case UpdateRule::PerMicrobatch:
        return 1;
    case UpdateRule::PerWindow:
        return accum > 0 ? accum : microbatches;
    }
    return microbatches;
}

int ScheduleInfo::minMicrobatches(int stages, int extraDepth) const
{
    return needsMicrobatchesCoveringDepth ? std::max(1, stages + extraDepth - 1) : 1;
}

int ScheduleInfo::microbatchesForWindow(int stages, int window, int extraDepth) const
{
    // Whole windows per batch; the rules are a multiple of p and floors, so lcm(a, p) or a floor
    // rounded up to a multiple of a comes within p steps.
    for (long m = window; window > 0 && m <= kMaxMicrobatches; m += window) {
        if (acceptsMicrobatches(stages, static_cast<int>(m), extraDepth)) {
            return static_cast<int>(m);
        }
    }
    return window;
}

std::optional<int> ScheduleInfo::lagBound(const ScheduleParams& params, int stage) const
{
    if (!takesAccumWindow()) {
        return std::nullopt; // only PACI states a bound: it is the method's guarantee
    }
    const int window = updateWindow(params.microbatches, params.accum);
    if (multiStage()) {
        return paciInterleavedLagBound(params.stages, stagesPerRank(params.stagesPerRank), stage, window);
    }
    return paciLagBound(params.stages, stage, updateWindow(params.microbatches, params.accum), params.extraDepth);
}

const std::vector<ScheduleInfo>& scheduleCatalogue()
{
    using F = ScheduleFamily;
    using U = UpdateRule;
    using W = WeightPolicy;
    using O = ScheduleOrder;
    // One row per schedule, positional in ScheduleInfo's field order; kept as laid out (one
    // schedule per two or three lines) rather than as clang-format would reflow the whole table.
    // clang-format off
    static const std::vector<ScheduleInfo> catalogue = {
        {"gpipe", O::GPipe, "GPipe", "GPipe: all forwards, then all backwards, flush and update per global batch", false,
            F::Flush, W::Flush, U::PerGlobalBatch, false, Placement::OnePerRank, 1, 1, false, 0, "ScheduleGPipe"},
        {"1f1b", O::OneFOneB, "1F1B-flush", "1F1B with flush: warm-up, one forward / one backward, cool-down, update per batch",
            false, F::Flush, W::Flush, U::PerGlobalBatch, false, Placement::OnePerRank, 1, 1, false, 0, "Schedule1F1B",
            /*defaultBaseline=*/true},
        {"zb-h1", O::ZeroBubbleH1, "ZB-H1", "Zero-bubble H1: split backward (I, W), W fills the tail; 1F1B's activation memory", false,
            F::ZeroBubble, W::Flush, U::PerGlobalBatch, false},
        {"zb-h2", O::ZeroBubbleH2, "ZB-H2", "Zero-bubble H2: split backward, up to 2(p-s)-1 in flight, near-zero bubble", false,
            F::ZeroBubble, W::Flush, U::PerGlobalBatch, false},
        {"pipedream", O::AsyncOneFOneB, "PipeDream", "PipeDream: async 1F1B, weight stashing, update after every micro-batch", true,
            F::Asynchronous, W::Stash, U::PerMicrobatch, false},
        {"2bw", O::AsyncOneFOneB, "PipeDream-2BW", "PipeDream-2BW: async 1F1B, two weight versions, update every m micro-batches", true,
            F::Asynchronous, W::TwoVersions, U::PerGlobalBatch, true},
        {"async-1f1b", O::AsyncOneFOneB, "async 1F1B", "Async 1F1B: no stashing, no accumulation, update every micro-batch (naive)", true,
            F::Asynchronous, W::InPlace, U::PerMicrobatch, false},
        {"paci", O::AsyncOneFOneB, "PACI", "PACI: async 1F1B, no flush, each stage updates after every a local backwards", true,
            F::LocalAccumulation, W::InPlace, U::PerWindow, false},
        {"interleaved-1f1b", O::Interleaved1F1B, "Interleaved 1F1B",
            "Interleaved 1F1B (Megatron virtual stages): v chunks per rank, loop placement, m a multiple of p", false,
            F::Flush, W::Flush, U::PerGlobalBatch, false, Placement::Loop, 2, kMaxStagesPerRank, true, 0,
            "ScheduleInterleaved1F1B"},
        {"looped-bfs", O::LoopedBfs, "Looped BFS",
            "Looped BFS (breadth-first): v chunks per rank, each chunk forwards every micro-batch before the next",
            false, F::Flush, W::Flush, U::PerGlobalBatch, false, Placement::Loop, 2, kMaxStagesPerRank, false, 0,
            "ScheduleLoopedBFS"},
        {"interleaved-zb", O::InterleavedZeroBubble, "Interleaved ZB",
            "Interleaved zero-bubble (ZB1P on a loop placement): split backward, W fills the bubbles, m a multiple of "
            "p",
            false, F::ZeroBubble, W::Flush, U::PerGlobalBatch, false, Placement::Loop, 2, kMaxStagesPerRank, true, 0,
            "ScheduleInterleavedZeroBubble"},
        {"zb-v", O::ZeroBubbleV, "ZB-V", "ZB-V: two chunks per rank in a V, split backward, zero steady bubble when F = I = W", false,
            F::ZeroBubble, W::Flush, U::PerGlobalBatch, false, Placement::V, 2, 2, false, 0, "ScheduleZBVZeroBubble"},
        {"dualpipev", O::DualPipeV, "DualPipeV", "DualPipeV (DeepSeek): V placement, overlapped forward-and-backward pairs, m >= 2p",
            false, F::ZeroBubble, W::Flush, U::PerGlobalBatch, false, Placement::V, 2, 2, false, 2,
            "ScheduleDualPipeV"},
        {"paci-interleaved", O::PaciInterleaved, "PACI interleaved",
            "PACI on a loop placement: v chunks per rank, async interleaved 1F1B, each chunk updates every a backwards",
            true, F::LocalAccumulation, W::InPlace, U::PerWindow, false, Placement::Loop, 2, kMaxStagesPerRank, true, 0,
            /*pytorchClass=*/"", /*defaultBaseline=*/false, /*fixedDepth=*/true,
            /*flushCounterpart=*/"interleaved-1f1b"},
    };
    // clang-format on
    return catalogue;
}

const ScheduleInfo* findSchedule(const std::string& name)
{
    const auto& c = scheduleCatalogue();
    const auto it = std::find_if(c.begin(), c.end(), [&](const ScheduleInfo& i) { return i.name == name; });
    return it == c.end() ? nullptr : &*it;
}

const ScheduleInfo& flushCounterpartOf(const ScheduleInfo& info)
{
    const ScheduleInfo* counterpart = info.flushCounterpart.empty() ? nullptr : findSchedule(info.flushCounterpart);
    return counterpart ? *counterpart : defaultBaselineSchedule();
}

const ScheduleInfo& defaultBaselineSchedule()
{
    const auto& c = scheduleCatalogue();
    const auto it = std::find_if(c.begin(), c.end(), [](const ScheduleInfo& i) { return i.defaultBaseline; });
    return it == c.end() ? c.front() : *it; // the catalogue test proves there is exactly one
}

const ScheduleInfo* findScheduleByPyTorchClass(const std::string& pytorchClass)
{
    const auto& c = scheduleCatalogue();
    const auto it = std::find_if(c.begin(), c.end(),
        [&](const ScheduleInfo& i) { return !i.pytorchClass.empty() && i.pytorchClass == pytorchClass; });
    return it == c.end() ? nullptr : &*it;
}

Result<ScheduleParams> paramsForPyTorchSchedule(
    const std::string& pytorchClass, int ranks, int stagesPerRank, int microbatches)
{
    const ScheduleInfo* info = findScheduleByPyTorchClass(pytorchClass);
    if (!info) {
        std::string known;
        for (const auto& i : scheduleCatalogue()) {
            if (!i.pytorchClass.empty()) {
                known += (known.empty() ? "" : ", ") + i.pytorchClass;
            }
        }
        return badParam("schedule", "no schedule of the catalogue is PyTorch's '" + pytorchClass + "'", known);
    }
    ScheduleParams params;
    params.name = info->name;
    params.stages = ranks;
    params.microbatches = microbatches;
    params.stagesPerRank = info->multiStage() ? stagesPerRank : 0;
    params.placement = info->placement;
    if (!info->multiStage() && stagesPerRank != 1) {
        return badParam("stages-per-rank", "got " + std::to_string(stagesPerRank) + " for " + pytorchClass, "1");
    }
    if (auto status = checkScheduleParams(params); !status) {
        return status.error();
    }
    return params;
}

bool isKnownSchedule(const std::string& name)
{
    return findSchedule(name) != nullptr;
}

std::string scheduleNamesWhere(bool (*trait)(const ScheduleInfo&))
{
    std::string out;
    for (const auto& info : scheduleCatalogue()) {
        if (trait(info)) {
            out += (out.empty() ? "" : ", ") + info.name;
        }
    }
    return out;
}

std::vector<int> lagBounds(const ScheduleParams& params)
{
    std::vector<int> bounds;
    const ScheduleInfo* info = findSchedule(params.name);
    const int stages = info ? params.stages * info->stagesPerRank(params.stagesPerRank) : 0;
    for (int s = 0; s < stages; ++s) {
        if (auto bound = info->lagBound(params, s)) {
            bounds.push_back(*bound);
        }
    }
    return bounds;
}

int paciLagBound(int stages, int stage, int accum, int extraDepth)
{
    return std::max(0, paci::maxLag(stages, stage, accum, extraDepth));
}

ScheduleParams PipelineSettings::params(int batches) const
{
    ScheduleParams p;
    p.name = info->name;
    p.stages = ranks;
    p.microbatches = microbatches;
    p.accum = accum();
    p.batches = batches;
    p.extraDepth = extraDepth;
    p.stagesPerRank = info->multiStage() ? stagesPerRank : 0;
    return p;
}

Result<PipelineSettings> resolvePipeline(const std::string& schedule, int ranks, int microbatches, int accum,
    int stagesPerRank, int extraDepth, MicrobatchChoice choice)
{
    const ScheduleInfo* info = findSchedule(schedule);
    if (!info) {
        return badParam("schedule", "unknown schedule '" + schedule + "'", allowedNames());
    }
    if (ranks < 1 || ranks > kMaxStages) {
        return badParam("stages", "got " + std::to_string(ranks), "1.." + std::to_string(kMaxStages));
    }
    if (microbatches < 0 || microbatches > kMaxMicrobatches) {
        return badParam("microbatches", "got " + std::to_string(microbatches),
            "1.." + std::to_string(kMaxMicrobatches) + ", or 0 for 'from the accumulation window'");
    }
    if (accum < 0 || accum > kMaxMicrobatches) {
        return badParam("accum", "got " + std::to_string(accum),
            "1.." + std::to_string(kMaxMicrobatches) + ", or 0 for 'same as microbatches'");
    }
    if (microbatches == 0 && accum == 0) {
        return badParam("microbatches", "neither microbatches nor the accumulation window is given", ">= 1");
    }
    if (Status v = checkStagesPerRank(*info, stagesPerRank); !v) {
        return v.error();
    }
    PipelineSettings out;
    out.info = info;
    out.ranks = ranks;
    out.stagesPerRank = info->stagesPerRank(stagesPerRank);
    out.extraDepth = extraDepth;
    const bool whole = choice == MicrobatchChoice::WholeWindows;
    if (info->takesAccumWindow()) {
        const int a = accum > 0 ? accum : microbatches;
        int m = microbatches > 0 ? microbatches : a;
        if (whole && (m % a != 0 || !info->acceptsMicrobatches(ranks, m, extraDepth))) {
            m = info->microbatchesForWindow(ranks, a, extraDepth); // whole windows, as the rules allow
        }
        out.microbatches = m;
        out.window = a;
        return out;
    }
    // No window: the schedule updates once per m (flush, 2bw) or per micro-batch (pipedream,
    // async-1f1b); an a given alone is its m ("a = m here").
    int m = microbatches > 0 ? microbatches : accum;
    if (accum > 0 && accum != m) {
        if (!whole) {
            return badParam("accum",
                "only the " + scheduleNamesWhere([](const ScheduleInfo& i) { return i.takesAccumWindow(); })
                    + " schedules take an accumulation window (got " + std::to_string(accum) + " for " + schedule + ")",
                "0 or " + std::to_string(m) + " (= microbatches) for " + schedule);
        }
        m = accum;
    }
    if (whole && !info->acceptsMicrobatches(ranks, m, extraDepth)) {
        m = info->microbatchesForWindow(ranks, m, extraDepth); // the next m its rules take
    }
    out.microbatches = m;
    out.window = info->updateWindow(m, m);
    return out;
}

Result<Schedule> generateUnvalidated(const ScheduleParams& input)
{
    if (auto status = checkScheduleParams(input); !status) {
        return status.error();
    }
    const ScheduleInfo& info = *findSchedule(input.name);
    ScheduleParams params = input;
    if (params.accum == 0) {
        params.accum = params.microbatches;
    }
    params.stagesPerRank = info.stagesPerRank(params.stagesPerRank);
    params.placement = info.placement;
    Schedule schedule = generate(info, params);
    for (int s = 0; s < schedule.stages(); ++s) { // the stated lag bound: the validator proves it
        if (const std::optional<int> bound = info.lagBound(params, s)) {
            schedule.lagBound.push_back(*bound);
        }
    }
    return schedule;
}

Error generatedScheduleInvalid(const Schedule& schedule, const Error& why)
{
    return makeError(ErrorCode::Internal,
        "generated schedule '" + schedule.params.name + "' is invalid: " + why.message, why.context);
}

Result<Schedule> makeSchedule(const ScheduleParams& params)
{
    auto schedule = generateUnvalidated(params);
    if (!schedule) {
        return schedule.error();
    }
    if (auto status = validate(*schedule); !status) {
        return generatedScheduleInvalid(*schedule, status.error());
    }
    return schedule;
}

} // namespace bs::runtime
