#include "profiler/io/chrome_trace.h"
#include "profiler/io/event_name.h"
#include "profiler/io/json_out_p.h"

#include <algorithm>
#include <sstream>

namespace bs::profiler {

namespace {

constexpr int kLaneCount = 3;
constexpr int kFormatVersion = 1;

void writeMeta(detail::JsonOut& j, const TraceMeta& meta)
{
    j.raw("\"otherData\":{\"bubblescope\":").integer(kFormatVersion);
    j.raw(",\"stages\":").integer(meta.stages);
    j.raw(",\"clock\":").string(meta.clock);
    j.raw(",\"title\":").string(meta.title);
    if (meta.stagesPerLane != 1) {
        j.raw(",\"stages_per_lane\":").integer(meta.stagesPerLane);
    }
    j.raw(",\"attributes\":{");
    bool first = true;
    for (const auto& [key, value] : meta.attributes) {
        j.raw(first ? "" : ",").string(key).raw(":").string(value);
        first = false;
    }
    j.raw("}}");
}

/// Names for every stage's process and lanes, so viewers show "stage 3 / compute".
void writeNames(detail::JsonOut& j, int stages)
{
    for (int s = 0; s < stages; ++s) {
        j.raw(s == 0 ? "\n" : ",\n");
        j.raw("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":").integer(s);
        j.raw(",\"tid\":0,\"args\":{\"name\":").string("stage " + std::to_string(s)).raw("}},");
        j.raw("\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":").integer(s);
        j.raw(",\"tid\":0,\"args\":{\"sort_index\":").integer(s).raw("}}");
        for (int lane = 0; lane < kLaneCount; ++lane) {
            j.raw(",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":").integer(s).raw(",\"tid\":").integer(lane);
            j.raw(",\"args\":{\"name\":").string(laneName(static_cast<Lane>(lane))).raw("}}");
        }
    }
}

void writeEvent(detail::JsonOut& j, const TraceEvent& e)
{
    const bool instant = e.kind == EventKind::Marker;
    const char letter = eventLetter(e.kind);
    j.raw(instant ? "\n{\"ph\":\"i\",\"s\":\"t\",\"name\":\"PP:" : "\n{\"ph\":\"X\",\"name\":\"PP:");
    j.integer(e.stage).raw(std::string_view(&letter, 1)).integer(e.microbatch);
    j.raw("\",\"cat\":\"").raw(eventKindName(e.kind));
    j.raw("\",\"pid\":").integer(e.stage).raw(",\"tid\":").integer(static_cast<int>(e.lane));
    j.raw(",\"ts\":").micros(e.start);
    if (!instant || e.end != e.start) {
        j.raw(",\"dur\":").micros(e.end - e.start);
    }
    j.raw(",\"args\":{\"mb\":").integer(e.microbatch).raw(",\"version\":").integer(e.version);
    j.raw(",\"bytes\":").integer(e.bytes).raw(",\"aux\":").integer(e.aux).raw("}}");
}

} // namespace

Status writeChromeTrace(std::ostream& out, const TraceSnapshot& trace)
{
    int stages = trace.meta().stages;
    trace.forEach([&](const TraceEvent& e) { stages = std::max(stages, static_cast<int>(e.stage) + 1); });

    detail::JsonOut j(out);
    j.raw("{");
    writeMeta(j, trace.meta());
    j.raw(",\n\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[");
    writeNames(j, stages);
    bool first = stages == 0;
    trace.forEach([&](const TraceEvent& e) {
        if (!first) {
            j.raw(",");
        }
        first = false;
        writeEvent(j, e);
    });
    j.raw("\n]}\n");
    j.flush();
    out.flush();
    if (!out) {
        return makeError(ErrorCode::IoError, "writing the Chrome trace failed (stream error)");
    }
    return ok();
}

std::string chromeTraceHead(const TraceMeta& meta)
{
    std::ostringstream out;
    detail::JsonOut j(out);
    j.raw("{");
    writeMeta(j, meta);
    j.raw(",\n\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[");
    writeNames(j, meta.stages);
    j.flush();
    return std::move(out).str();
}

std::string chromeTraceChunk(const TraceSnapshot& trace, std::size_t begin, std::size_t end, bool first)
{
    std::ostringstream out;
    detail::JsonOut j(out);
    for (std::size_t i = begin; i < end && i < trace.size(); ++i) {
        if (!first) {
            j.raw(",");
        }
        first = false;
        writeEvent(j, trace[i]);
    }
    j.flush();
    return std::move(out).str();
}

std::string toChromeTraceJson(const TraceSnapshot& trace)
{
    std::ostringstream out;
    (void)writeChromeTrace(out, trace); // a string stream cannot fail short of bad_alloc
    return std::move(out).str();
}

} // namespace bs::profiler
