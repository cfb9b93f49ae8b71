// readChromeTrace: nlohmann's parser with a callback that converts each trace event as soon as it
// is complete and then discards it, so memory stays at one event's JSON tree, not 10^6 of them.
#include "profiler/io/chrome_trace.h"

#include "profiler/io/event_name.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace bs::profiler {

namespace {

using json = nlohmann::json;

struct AbortParse
{
};

/// Converts event objects into TraceEvents; strict for our files, lenient for foreign ones.
class TraceBuilder
{
public:
    void onMeta(const json& other)
    {
        if (!other.is_object() || !other.contains("bubblescope")) {
            return; // someone else's otherData: a foreign trace
        }
        m_ours = true;
        TraceMeta& meta = m_trace.meta;
        meta.stages = static_cast<int>(integer(other, "stages", "otherData", 0, std::numeric_limits<int>::max()));
        meta.clock = string(other, "clock", "otherData");
        meta.title = string(other, "title", "otherData");
        const json* attrs = member(other, "attributes", "otherData");
        if (!attrs->is_object()) {
            fail("otherData.attributes", "must be an object of strings");
        }
        for (const auto& [key, value] : attrs->items()) {
            if (!value.is_string()) {
                fail("otherData.attributes." + key, "must be a string");
            }
            meta.attributes[key] = value.get<std::string>();
        }
    }

    void onElement(const json& e)
    {
        m_where = "traceEvents[" + std::to_string(m_index++) + "]";
        if (!e.is_object()) {
            skipOrFail(m_where, "is not an object");
            return;
        }
        const auto ph = e.find("ph");
        if (ph == e.end() || !ph->is_string()) {
            skipOrFail(m_where + ".ph", "missing or not a string");
            return;
        }
        const std::string phase = ph->get<std::string>();
        if (phase == "M") {
            return; // process/thread names: derived from stage and lane on reading
        }
        const bool instant = phase == "i" || phase == "I";
        if (phase != "X" && !instant) {
            skipOrFail(m_where + ".ph", "unsupported phase '" + phase + "'; expected X, i or M");
            return;
        }
        const auto name = e.find("name");
        const std::optional<ParsedEventName> parsed =
            name != e.end() && name->is_string() ? parseEventName(name->get_ref<const std::string&>()) : std::nullopt;
        if (!parsed) {
            skipOrFail(m_where + ".name", "is not of the form PP:<stage><letter><microbatch>");
            return;
        }
        if (!m_ours && (!e.contains("ts") || !e["ts"].is_number())) {
            ++m_trace.skippedEvents;
            return;
        }
        m_ours ? convertOurs(e, *parsed, instant) : convertForeign(e, *parsed, instant);
    }

    Result<ChromeTrace> finish()
    {
        m_trace.foreign = !m_ours;
        if (!m_ours) {
            for (const TraceEvent& e : m_trace.events) {
                m_trace.meta.stages = std::max(m_trace.meta.stages, static_cast<int>(e.stage) + 1);
            }
            m_trace.meta.clock = "wall";
        }
        return std::move(m_trace);
    }

    const std::optional<Error>& error() const { return m_error; }
    bool ours() const { return m_ours; }

private:
    void convertOurs(const json& e, const ParsedEventName& name, bool instant)
    {
        TraceEvent ev;
        ev.stage = static_cast<std::uint16_t>(name.stage);
        ev.kind = name.kind;
        ev.start = micros(e, "ts", m_where, true);
        ev.end = ev.start + micros(e, "dur", m_where, !instant);
        if (integer(e, "pid", m_where, 0, std::numeric_limits<std::uint16_t>::max()) != name.stage) {
            fail(m_where + ".pid", "disagrees with the stage in the name");
        }
        ev.lane = static_cast<Lane>(integer(e, "tid", m_where, 0, 2));
        const json* args = member(e, "args", m_where);
        const std::string argsWhere = m_where + ".args";
        ev.microbatch = static_cast<std::int32_t>(
            integer(*args, "mb", argsWhere, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
        if (ev.microbatch != name.microbatch) {
            fail(argsWhere + ".mb", "disagrees with the micro-batch in the name");
        }
        ev.version = static_cast<std::int32_t>(integer(*args, "version", argsWhere, std::numeric_limits<std::int32_t>::min(),
                                                       std::numeric_limits<std::int32_t>::max()));
        ev.bytes = integer(*args, "bytes", argsWhere, std::numeric_limits<std::int64_t>::min(),
                           std::numeric_limits<std::int64_t>::max());
        ev.aux = static_cast<std::uint16_t>(integer(*args, "aux", argsWhere, 0, std::numeric_limits<std::uint16_t>::max()));
        m_trace.events.push_back(ev);
    }

    void convertForeign(const json& e, const ParsedEventName& name, bool instant)
    {
        TraceEvent ev;
        ev.stage = static_cast<std::uint16_t>(name.stage);
        ev.kind = name.kind;
        ev.microbatch = name.microbatch;
        ev.start = toNs(e["ts"].get<double>());
        const auto dur = e.find("dur");
        ev.end = ev.start + (!instant && dur != e.end() && dur->is_number() ? toNs(dur->get<double>()) : 0);
        const auto args = e.find("args");
        if (args != e.end() && args->is_object()) {
            ev.version = static_cast<std::int32_t>(optionalInt(*args, "version", 0));
            ev.bytes = optionalInt(*args, "bytes", 0);
        }
        m_trace.events.push_back(ev);
    }

    static std::int64_t optionalInt(const json& obj, const char* key, std::int64_t fallback)
    {
        const auto it = obj.find(key);
        return it != obj.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
    }

    static TimeNs toNs(double micros)
    {
        constexpr double kLimit = 9.0e12; // µs; keeps ns far inside int64 and exact after rounding
        return std::isfinite(micros) && std::abs(micros) < kLimit ? static_cast<TimeNs>(std::llround(micros * 1000.0)) : 0;
    }

    TimeNs micros(const json& obj, const char* key, const std::string& where, bool required)
    {
        const auto it = obj.find(key);
        if (it == obj.end() && !required) {
            return 0;
        }
        if (it == obj.end() || !it->is_number() || !std::isfinite(it->get<double>())
            || std::abs(it->get<double>()) >= 9.0e12) {
            fail(where + "." + key, "missing or not a finite number of microseconds");
        }
        return toNs(it->get<double>());
    }

    std::int64_t integer(const json& obj, const char* key, const std::string& where, std::int64_t lo, std::int64_t hi)
    {
        const json* v = member(obj, key, where);
        if (!v->is_number_integer()) {
            fail(where + "." + key, "must be an integer");
        }
        const std::int64_t x = v->get<std::int64_t>();
        if (x < lo || x > hi || (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi))) {
            fail(where + "." + key, "= " + v->dump() + " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
        }
        return x;
    }

    std::string string(const json& obj, const char* key, const std::string& where)
    {
        const json* v = member(obj, key, where);
        if (!v->is_string()) {
            fail(where + "." + key, "must be a string");
        }
        return v->get<std::string>();
    }

    const json* member(const json& obj, const char* key, const std::string& where)
    {
        const auto it = obj.find(key);
        if (it == obj.end()) {
            fail(where + "." + key, "is missing");
        }
        return &*it;
    }

    void skipOrFail(const std::string& where, const std::string& what)
    {
        if (m_ours) {
            fail(where, what);
        }
        ++m_trace.skippedEvents;
    }

    [[noreturn]] void fail(const std::string& where, const std::string& what)
    {
        m_error = makeError(ErrorCode::ParseError, "malformed Bubblescope trace: " + where + " " + what, where);
        throw AbortParse{};
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
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    const bool arrayFormat = first != std::string_view::npos && text[first] == '[';
    const int eventDepth = arrayFormat ? 1 : 2;
    TraceBuilder builder;
    std::string topKey;
    bool sawEvents = arrayFormat;
    json::parser_callback_t callback = [&](int depth, json::parse_event_t event, json& parsed) {
        using E = json::parse_event_t;
        if (!arrayFormat && depth == 1 && event == E::key) {
            topKey = parsed.get<std::string>();
            sawEvents = sawEvents || topKey == "traceEvents";
            return true;
        }
        const bool inEvents = arrayFormat || topKey == "traceEvents";
        if (inEvents && depth == eventDepth && (event == E::object_end || event == E::array_end || event == E::value)) {
            builder.onElement(parsed);
            return false; // converted: drop the element so the tree never grows
        }
        if (!arrayFormat && depth == 1 && event == E::object_end && topKey == "otherData") {
            builder.onMeta(parsed);
        }
        return true;
    };
    try {
        const json root = json::parse(text.begin(), text.end(), callback);
        if (!arrayFormat && (!root.is_object() || !sawEvents || !root["traceEvents"].is_array())) {
            return makeError(ErrorCode::ParseError, "not a Chrome trace: expected an object with a \"traceEvents\" array "
                                                    "or an array of events",
                             "traceEvents");
        }
    } catch (const json::parse_error& e) {
        return makeError(ErrorCode::ParseError, std::string("malformed trace JSON: ") + e.what(),
                         "byte " + std::to_string(e.byte));
    } catch (const AbortParse&) {
        return *builder.error();
    }
    return builder.finish();
}

Result<ChromeTrace> readChromeTraceFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return makeError(ErrorCode::IoError, "cannot open trace file '" + path.string() + "'", path.string());
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        return makeError(ErrorCode::IoError, "cannot read trace file '" + path.string() + "'", path.string());
    }
    Result<ChromeTrace> trace = readChromeTrace(text.view());
    if (!trace) {
        Error e = trace.error();
        e.context = path.string() + ": " + e.context;
        return e;
    }
    return trace;
}

} // namespace bs::profiler
