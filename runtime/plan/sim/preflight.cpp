#include "runtime/plan/sim/preflight.h"

#include "base/bounded_read.h"
#include "runtime/plan/schedule/catalogue.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>

namespace bs::runtime {

namespace {

std::string gib(std::int64_t bytes)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
    return buf;
}

/// The first integer after `key` in `text`, or -1.
std::int64_t numberAfter(const std::string& text, const std::string& key)
{
    const std::size_t at = text.find(key);
    if (at == std::string::npos) {
        return -1;
    }
    std::size_t i = at + key.size();
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) {
        ++i;
    }
    std::int64_t v = -1;
    const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
    return ec == std::errc() && ptr != text.data() + i ? v : -1;
}

} // namespace

Result<MemoryEstimate> estimateMemory(const GptScenario& scenario, int stagesSharingMemory)
{
    auto request = makeGptRequest(scenario);
    if (!request) {
        return request.error();
    }
    const ScheduleInfo* info = findSchedule(scenario.schedule);
    if (!info || !info->takesAccumWindow()) {
        request->schedule.accum = 0; // only schedules that update per window take one (the catalogue says which)
    }
    request->schedule.batches = 1;
    auto simulated = simulate(*request);
    if (!simulated) {
        return simulated.error();
    }
    MemoryEstimate estimate;
    const auto& stages = simulated->report.perStage;
    const std::size_t sharing = stagesSharingMemory > 0 ? static_cast<std::size_t>(stagesSharingMemory) : stages.size();
    std::vector<std::int64_t> peaks;
    for (const auto& stage : stages) {
        peaks.push_back(stage.peakMemoryBytes);
        estimate.peakStageBytes = std::max(estimate.peakStageBytes, stage.peakMemoryBytes);
    }
    std::sort(peaks.rbegin(), peaks.rend()); // the heaviest stages share the memory: conservative
    for (std::size_t i = 0; i < std::min(sharing, peaks.size()); ++i) {
        estimate.totalBytes += peaks[i];
    }
    return estimate;
}

Status checkMemoryFits(const GptScenario& scenario, std::int64_t availableBytes, int stagesSharingMemory)
{
    if (availableBytes <= 0) {
        return ok(); // unknown: nothing to compare with
    }
    auto estimate = estimateMemory(scenario, stagesSharingMemory);
    if (!estimate) {
        return estimate.error();
    }
    if (estimate->totalBytes <= availableBytes) {
        return ok();
    }
    std::string nearest = "none: even micro-batch size 1 does not fit; use more stages or a smaller model";
    for (int b = scenario.microBatchSize / 2; b >= 1; b /= 2) {
        GptScenario smaller = scenario;
        smaller.microBatchSize = b;
        auto e = estimateMemory(smaller, stagesSharingMemory);
        if (e && e->totalBytes <= availableBytes) {
            nearest = "--micro-batch-size " + std::to_string(b) + " (estimate " + gib(e->totalBytes) + ")";
            break;
        }
    }
    return makeError(ErrorCode::InvalidArgument,
        "the run would need about " + gib(estimate->totalBytes) + " (largest stage " + gib(estimate->peakStageBytes)
            + ", simulated per-stage peak) but " + gib(availableBytes)
            + " is available; nearest setting that fits: " + nearest,
        "pre-flight: pipeline.micro_batch_size = " + std::to_string(scenario.microBatchSize));
}

std::int64_t availableHostMemoryBytes()
{
    Result<std::string> meminfo = readBoundedFile("/proc/meminfo", kMiB, "memory information");
    if (!meminfo) {
        return 0;
    }
    const std::int64_t availableKiB = numberAfter(*meminfo, "MemAvailable:");
    if (availableKiB <= 0) {
        return 0;
    }
    std::int64_t bytes = availableKiB * 1024;
    if (Result<std::string> limit = readBoundedFile("/sys/fs/cgroup/memory.max", 4096, "cgroup memory limit");
        limit && limit->rfind("max", 0) != 0) {
        std::int64_t max = 0;
        const auto [ptr, ec] = std::from_chars(limit->data(), limit->data() + limit->size(), max);
        if (ec == std::errc() && max > 0) {
            bytes = std::min(bytes, max);
        }
    }
    return bytes;
}

} // namespace bs::runtime
