#include "runtime/schedule/catalogue.h"

#include "runtime/schedule/generators.h"
#include "runtime/schedule/validate.h"

#include <algorithm>

namespace bs::runtime {

namespace {

constexpr int kMaxStages = 256;
constexpr int kMaxMicrobatches = 100'000;
constexpr int kMaxBatches = 1'000'000;
constexpr long kMaxActions = 50'000'000; // keeps a typo like --batches 1e9 from eating the machine

std::string allowedNames()
{
    std::string out;
    for (const auto& info : scheduleCatalogue()) {
        out += (out.empty() ? "" : ", ") + info.name;
    }
    return out;
}

Error badParam(const std::string& field, const std::string& message, const std::string& allowed)
{
    return makeError(ErrorCode::InvalidArgument, field + ": " + message, "allowed: " + allowed);
}

Status checkParams(const ScheduleParams& params)
{
    if (!isKnownSchedule(params.name)) {
        return badParam("schedule", "unknown schedule '" + params.name + "'", allowedNames());
    }
    if (params.stages < 1 || params.stages > kMaxStages) {
        return badParam("stages", "got " + std::to_string(params.stages), "1.." + std::to_string(kMaxStages));
    }
    if (params.microbatches < 1 || params.microbatches > kMaxMicrobatches) {
        return badParam("microbatches", "got " + std::to_string(params.microbatches),
                        "1.." + std::to_string(kMaxMicrobatches));
    }
    if (params.batches < 1 || params.batches > kMaxBatches) {
        return badParam("batches", "got " + std::to_string(params.batches), "1.." + std::to_string(kMaxBatches));
    }
    if (params.accum < 0) {
        return badParam("accum", "got " + std::to_string(params.accum), ">= 1, or 0 for 'same as microbatches'");
    }
    const bool isPaci = params.name == "paci";
    if (params.accum != 0 && !isPaci && params.accum != params.microbatches) {
        return badParam("accum", "only the paci schedule takes an accumulation window (got " + std::to_string(params.accum)
                                     + " for " + params.name + ")",
                        "0 or " + std::to_string(params.microbatches) + " (= microbatches) for " + params.name);
    }
    if (isPaci && params.accum != 0 && params.microbatches % params.accum != 0) {
        return badParam("accum",
                        "the accumulation window " + std::to_string(params.accum) + " must divide microbatches "
                            + std::to_string(params.microbatches) + " so every update applies whole windows",
                        "a divisor of " + std::to_string(params.microbatches));
    }
    const auto* info = &*std::find_if(scheduleCatalogue().begin(), scheduleCatalogue().end(),
                                      [&](const ScheduleInfo& i) { return i.name == params.name; });
    if (params.extraDepth < 0 || (params.extraDepth > 0 && !info->asynchronous)) {
        return badParam("extra-depth", "got " + std::to_string(params.extraDepth) + " for " + params.name,
                        info->asynchronous ? ">= 0" : "0 (only asynchronous schedules take an extra in-flight depth)");
    }
    const long actions = 3L * params.stages * params.microbatches * params.batches;
    if (actions > kMaxActions) {
        return badParam("batches", "stages x microbatches x batches is too large (" + std::to_string(actions) + " actions)",
                        "at most " + std::to_string(kMaxActions) + " actions");
    }
    return ok();
}

} // namespace

const std::vector<ScheduleInfo>& scheduleCatalogue()
{
    static const std::vector<ScheduleInfo> catalogue = {
        {"gpipe", "GPipe: all forwards, then all backwards, flush and update per global batch", false},
        {"1f1b", "1F1B with flush: warm-up, one forward / one backward, cool-down, update per batch", false},
        {"zb-h1", "Zero-bubble H1: split backward (I, W), W fills the tail; 1F1B's activation memory", false},
        {"zb-h2", "Zero-bubble H2: split backward, up to 2(p-s)-1 in flight, near-zero bubble", false},
        {"pipedream", "PipeDream: async 1F1B, weight stashing, update after every micro-batch", true},
        {"2bw", "PipeDream-2BW: async 1F1B, two weight versions, update every m micro-batches", true},
        {"async-1f1b", "Async 1F1B: no stashing, no accumulation, update every micro-batch (naive)", true},
        {"paci", "PACI: async 1F1B, no flush, each stage updates after every a local backwards", true},
    };
    return catalogue;
}

bool isKnownSchedule(const std::string& name)
{
    const auto& c = scheduleCatalogue();
    return std::any_of(c.begin(), c.end(), [&](const ScheduleInfo& i) { return i.name == name; });
}

int paciLagBound(int stages, int stage, int accum, int extraDepth)
{
    const int crossed = stages - stage - 1 + extraDepth; // backwards between a forward and its backward
    return crossed <= 0 ? 0 : (crossed + accum - 1) / accum;
}

Result<Schedule> makeSchedule(const ScheduleParams& input)
{
    if (auto status = checkParams(input); !status) {
        return status.error();
    }
    ScheduleParams params = input;
    if (params.accum == 0) {
        params.accum = params.microbatches;
    }
    Schedule schedule;
    const std::string& name = params.name;
    if (name == "gpipe") {
        schedule = detail::makeGpipe(params);
    } else if (name == "1f1b") {
        schedule = detail::makeOneFOneB(params);
    } else if (name == "zb-h1" || name == "zb-h2") {
        schedule = detail::makeZeroBubble(params, name == "zb-h2");
    } else if (name == "pipedream") {
        params.accum = 1; // updates after every backward
        schedule = detail::makeAsyncOneFOneB(params, 1, WeightPolicy::Stash);
    } else if (name == "2bw") {
        schedule = detail::makeAsyncOneFOneB(params, params.microbatches, WeightPolicy::TwoVersions);
    } else if (name == "async-1f1b") {
        params.accum = 1;
        schedule = detail::makeAsyncOneFOneB(params, 1, WeightPolicy::InPlace);
    } else { // paci
        schedule = detail::makeAsyncOneFOneB(params, params.accum, WeightPolicy::InPlace);
    }
    if (auto status = validate(schedule); !status) {
        return makeError(ErrorCode::Internal, "generated schedule '" + name + "' is invalid: " + status.error().message,
                         status.error().context);
    }
    return schedule;
}

} // namespace bs::runtime
