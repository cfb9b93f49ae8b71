// readChromeTrace: nlohmann's SAX parser feeds TraceSax, which hands over one RawEvent at a time;
// TraceBuilder converts it, strictly for our own files and leniently for foreign ones. No JSON tree
// is built for events, so 10^6 events cost one pass over the text.
#include "base/bounded_read.h"
#include "profiler/io/chrome_trace.h"
#include "profiler/io/event_name.h"
#include "profiler/io/micros.h"
#include "profiler/io/trace_sax_p.h"

#include <charconv>
#include <limits>

namespace bs::profiler {

namespace {

using json = nlohmann::json;
using detail::RawEvent;
using detail::RawField;

/// A RawField holding a number of microseconds, in ns (exact for the writer's 3-decimal form).
std::optional<TimeNs> fieldNs(const RawField& f)
{
    switch (f.type) {
    case RawField::Type::Integer:
        if (f.integer < -kMaxTraceMicros || f.integer > kMaxTraceMicros) {
            return std::nullopt;
        }
        return f.integer * 1000;
    case RawField::Type::Float:
        return microsTextToNs(f.text);
    default:
        return std::nullopt;
    }
}

/// Converts RawEvents into TraceEvents; strict for our files, lenient for foreign ones. Every
/// check that fails records an Error and returns false, which stops the parser.
class TraceBuilder
{
public:
    explicit TraceBuilder(std::size_t expectedEvents) { m_trace.events.reserve(expectedEvents); }

    bool onMeta(const json& other)
    {
        if (!other.is_object() || !other.contains("bubblescope")) {
            return true; // someone else's otherData: a foreign trace
        }
        m_ours = true;
        TraceMeta& meta = m_trace.meta;
        const auto stages = other.find("stages");
        if (stages == other.end() || !stages->is_number_integer() || stages->get<std::int64_t>() < 0
            || stages->get<std::int64_t>() > std::numeric_limits<int>::max()) {
            return fail("otherData.stages", "must be an integer in 0..2147483647");
        }
        meta.stages = stages->get<int>();
        for (const char* key : {"clock", "title"}) {
            const auto v = other.find(key);
            if (v == other.end() || !v->is_string()) {
                return fail(std::string("otherData.") + key, "must be a string");
            }
            (std::string_view(key) == "clock" ? meta.clock : meta.title) = v->get<std::string>();
        }
        const auto attrs = other.find("attributes");
        if (attrs == other.end() || !attrs->is_object()) {
            return fail("otherData.attributes", "must be an object of strings");
        }
        for (const auto& [key, value] : attrs->items()) {
            if (!value.is_string()) {
                return fail("otherData.attributes." + key, "must be a string");
            }
            meta.attributes[key] = value.get<std::string>();
        }
        return readStagesPerLane(other);
    }

    // otherData.stages_per_lane (1 when absent). Files written before it was a number carry it as
    // the string attribute "stages_per_rank": read once here, with the same bound.
    bool readStagesPerLane(const json& other)
    {
        TraceMeta& meta = m_trace.meta;
        const std::string allowed = "an integer in 1.." + std::to_string(kMaxStagesPerLane);
        if (const auto field = other.find("stages_per_lane"); field != other.end()) {
            if (!field->is_number_integer() || field->get<std::int64_t>() < 1
                || field->get<std::int64_t>() > kMaxStagesPerLane) {
                return fail("otherData.stages_per_lane", "must be " + allowed);
            }
            meta.stagesPerLane = field->get<int>();
        } else if (const auto old = meta.attributes.find("stages_per_rank"); old != meta.attributes.end()) {
            int v = 0;
            const auto [ptr, ec] = std::from_chars(old->second.data(), old->second.data() + old->second.size(), v);
            if (ec != std::errc() || ptr != old->second.data() + old->second.size() || v < 1 || v > kMaxStagesPerLane) {
                return fail("otherData.attributes.stages_per_rank", "must be " + allowed);
            }
            meta.stagesPerLane = v;
            meta.attributes.erase(old);
        }
        return true;
    }

    bool onElement(const RawEvent& e)
    {
        m_where = "traceEvents[" + std::to_string(m_index++) + "]";
        if (!e.isObject) {
            return skipOrFail(m_where, "is not an object");
        }
        if (e.ph.type != RawField::Type::String) {
            return skipOrFail(m_where + ".ph", "missing or not a string");
        }
        if (e.ph.text == "M") {
            return true; // process/thread names: derived from stage and lane on reading
        }
        const bool instant = e.ph.text == "i" || e.ph.text == "I";
        if (e.ph.text != "X" && !instant) {
            return skipOrFail(m_where + ".ph", "unsupported phase '" + e.ph.text + "'; expected X, i or M");
        }
        const std::optional<ParsedEventName> name =
            e.name.type == RawField::Type::String ? parseEventName(e.name.text) : std::nullopt;
        if (!name) {
            return skipOrFail(m_where + ".name", "is not of the form PP:<stage><letter><microbatch>");
        }
        return m_ours ? convertOurs(e, *name, instant) : convertForeign(e, *name, instant);
    }

    ChromeTrace finish()
    {
        m_trace.foreign = !m_ours;
        if (!m_ours) {
            for (const TraceEvent& ev : m_trace.events) {
                m_trace.meta.stages = std::max(m_trace.meta.stages, static_cast<int>(ev.stage) + 1);
            }
            m_trace.meta.clock = "wall";
        }
        return std::move(m_trace);
    }

    const std::optional<Error>& error() const { return m_error; }

private:
    bool convertOurs(const RawEvent& e, const ParsedEventName& name, bool instant)
    {
        TraceEvent ev;
        ev.stage = static_cast<std::uint16_t>(name.stage);
        ev.kind = name.kind;
        const std::optional<TimeNs> start = fieldNs(e.ts);
        if (!start) {
            return fail(m_where + ".ts", "missing or not a number of microseconds within ±9.2e15");
        }
        const std::optional<TimeNs> dur = fieldNs(e.dur);
        if ((!instant || e.dur.present()) && !dur) {
            return fail(m_where + ".dur", "missing or not a number of microseconds within ±9.2e15");
        }
        ev.start = *start;
        ev.end = ev.start + dur.value_or(0);
        std::int64_t v = 0;
        if (!integer(e.pid, ".pid", 0, std::numeric_limits<std::uint16_t>::max(), v)) {
            return false;
        }
        if (v != name.stage) {
            return fail(m_where + ".pid", "disagrees with the stage in the name");
        }
        if (!integer(e.tid, ".tid", 0, 2, v)) {
            return false;
        }
        ev.lane = static_cast<Lane>(v);
        if (!e.args.present()) {
            return fail(m_where + ".args", "is missing");
        }
        if (!e.argsIsObject) {
            return fail(m_where + ".args", "must be an object");
        }
        constexpr auto i32min = std::numeric_limits<std::int32_t>::min();
        constexpr auto i32max = std::numeric_limits<std::int32_t>::max();
        if (!integer(e.mb, ".args.mb", i32min, i32max, v)) {
            return false;
        }
        ev.microbatch = static_cast<std::int32_t>(v);
        if (ev.microbatch != name.microbatch) {
            return fail(m_where + ".args.mb", "disagrees with the micro-batch in the name");
        }
        if (!integer(e.version, ".args.version", i32min, i32max, v)) {
            return false;
        }
        ev.version = static_cast<std::int32_t>(v);
        if (!integer(e.bytes, ".args.bytes", std::numeric_limits<std::int64_t>::min(),
                std::numeric_limits<std::int64_t>::max(), ev.bytes)) {
            return false;
        }
        if (!integer(e.aux, ".args.aux", 0, std::numeric_limits<std::uint16_t>::max(), v)) {
            return false;
        }
        ev.aux = static_cast<std::uint16_t>(v);
        m_trace.events.push_back(ev);
        return true;
    }

    bool convertForeign(const RawEvent& e, const ParsedEventName& name, bool instant)
    {
        const std::optional<TimeNs> start = fieldNs(e.ts);
        if (!start) {
            ++m_trace.skippedEvents;
            return true;
        }
        TraceEvent ev;
        ev.stage = static_cast<std::uint16_t>(name.stage);
        ev.kind = name.kind;
        ev.microbatch = name.microbatch;
        ev.start = *start;
        ev.end = ev.start + (instant ? 0 : fieldNs(e.dur).value_or(0));
        if (e.version.type == RawField::Type::Integer) {
            ev.version = static_cast<std::int32_t>(std::clamp<std::int64_t>(e.version.integer, INT32_MIN, INT32_MAX));
        }
        if (e.bytes.type == RawField::Type::Integer) {
            ev.bytes = e.bytes.integer;
        }
        m_trace.events.push_back(ev);
        return true;
    }

    bool integer(const RawField& f, const char* field, std::int64_t lo, std::int64_t hi, std::int64_t& out)
    {
        if (!f.present()) {
            return fail(m_where + field, "is missing");
        }
        if (!f.isInteger()) {
            return fail(m_where + field, "must be an integer");
        }
        if (f.type == RawField::Type::Unsigned || f.integer < lo || f.integer > hi) {
            return fail(m_where + field,
                "= " + f.dump() + " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
        }
        out = f.integer;
        return true;
    }

    bool skipOrFail(const std::string& where, const std::string& what)
    {
        if (m_ours) {
            return fail(where, what);
        }
        ++m_trace.skippedEvents;
        return true;
    }

    bool fail(const std::string& where, const std::string& what)
    {
        m_error = makeError(ErrorCode::ParseError, "malformed Bubblescope trace: " + where + " " + what, where);
        return false;
    }

    ChromeTrace m_trace;
    bool m_ours = false;
    std::size_t m_index = 0;
    std::string m_where;
    std::optional<Error> m_error;
};

} // namespace

Result<ChromeTrace> readChromeTrace(std::string_view text)
{
    TraceBuilder builder(text.size() / 200); // our events take ~170 bytes of JSON each
    detail::TraceSax sax([&](const RawEvent& e) { return builder.onElement(e); },
        [&](const json& meta) { return builder.onMeta(meta); });
    const bool parsed = json::sax_parse(text.begin(), text.end(), &sax);
    if (sax.syntaxError()) {
        return makeError(ErrorCode::ParseError, "malformed trace JSON: " + sax.syntaxError()->second,
            "byte " + std::to_string(sax.syntaxError()->first));
    }
    if (!parsed) {
        return *builder.error();
    }
    if (!sax.sawEventArray()) {
        return makeError(ErrorCode::ParseError,
            "not a Chrome trace: expected an object with a \"traceEvents\" array or an array of events", "traceEvents");
    }
    return builder.finish();
}

Result<ChromeTrace> readCutShortChromeTrace(std::string_view text)
{
    // Whole chunks end with a complete event; a chunk the kill interrupted ends inside one. Close
    // the array after the text, and on failure after the last event boundary before its end.
    std::string_view body = text;
    for (int attempt = 0; attempt < 3; ++attempt) {
        std::string closed(body);
        closed += "\n]}\n";
        Result<ChromeTrace> trace = readChromeTrace(closed);
        if (trace || attempt == 2) {
            return trace;
        }
        const std::size_t boundary = body.rfind(",\n{");
        if (boundary == std::string_view::npos) {
            return trace;
        }
        body = body.substr(0, boundary);
    }
    return makeError(ErrorCode::ParseError, "unreachable");
}

Result<ChromeTrace> readCutShortChromeTraceFile(const std::filesystem::path& path)
{
    Result<MappedFile> file = MappedFile::open(path, kMaxTraceFileBytes, "trace file");
    if (!file) {
        return file.error();
    }
    Result<ChromeTrace> trace = readCutShortChromeTrace(file->text());
    if (!trace) {
        Error e = trace.error();
        e.context = path.string() + ": " + e.context;
        return e;
    }
    return trace;
}

Result<ChromeTrace> readChromeTraceFile(const std::filesystem::path& path)
{
    // Mapped rather than copied: a 10^6-event trace is ~170 MB of text. Opened without blocking
    // and checked to be a regular file, so a FIFO named trace.json cannot hang the reader.
    Result<MappedFile> file = MappedFile::open(path, kMaxTraceFileBytes, "trace file");
    if (!file) {
        return file.error();
    }
    Result<ChromeTrace> trace = readChromeTrace(file->text());
    if (!trace) {
        Error e = trace.error();
        e.context = path.string() + ": " + e.context;
        return e;
    }
    return trace;
}

} // namespace bs::profiler
