#include "profiler/import/kineto_reader.h"

#include "profiler/import/byte_source_p.h"
#include "profiler/io/micros.h"

#include <cmath>
#include <cstdint>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

namespace bs::profiler::kineto {

namespace {

using json = nlohmann::json;

/// The event being parsed: only the members the importer reads.
struct Pending
{
    char ph = 0;
    bool hasName = false, hasTs = false, hasDur = false;
    std::string badField; ///< first field of the wrong type, for the message
    std::string name, cat, pid, tid;
    TimeNs ts = 0, dur = 0;
    std::int64_t correlation = -1, sequence = -1, fwdThread = -1;
    bool hasComm = false;
    CommInfo comm;

    void reset() { *this = Pending{}; }
};

class KinetoSax
{
public:
    KinetoSax(RankTrace& out, detail::ByteSource& source, const ReadLimits& limits)
        : m_out(out)
        , m_source(source)
        , m_limits(limits)
    {
        m_frames.reserve(16);
    }

    bool null() { return scalarOther(); }
    bool boolean(bool value) { return capture(value) || scalarOther(); }
    bool binary(json::binary_t&) { return scalarOther(); }
    bool number_integer(json::number_integer_t v) { return number(static_cast<std::int64_t>(v), nullptr, json(v)); }
    bool number_unsigned(json::number_unsigned_t v)
    {
        const std::int64_t clipped = v > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(v);
        return number(clipped, nullptr, json(v));
    }
    bool number_float(json::number_float_t v, const json::string_t& text)
    {
        // Saturated: converting a double past int64's range is undefined behaviour, and a literal
        // like "dur": 7777…774 (117 digits, found by fuzz_kineto_trace) arrives here as 7.8e116.
        constexpr double kLimit = 9223372036854775808.0; // 2^63
        const std::int64_t clipped = std::isnan(v) ? 0
            : v >= kLimit                          ? INT64_MAX
            : v < -kLimit                          ? INT64_MIN
                                                   : static_cast<std::int64_t>(v);
        return number(clipped, &text, json(v));
    }
    bool string(json::string_t& value);
    bool key(json::string_t& value)
    {
        m_key.swap(value);
        return true;
    }
    bool start_object(std::size_t) { return open(true); }
    bool start_array(std::size_t) { return open(false); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex)
    {
        m_error = makeError(ErrorCode::ParseError, std::string("malformed trace JSON: ") + ex.what(),
                            m_out.file + ": byte " + std::to_string(position));
        return false;
    }

    std::optional<Error> m_error;
    bool m_sawEvents = false;
    json m_distributed;

private:
    enum class Frame : std::uint8_t { Root, Events, Event, Args, Capture, Skip };

    bool scalarOther()
    {
        if (!m_frames.empty() && m_frames.back() == Frame::Event) {
            noteBad();
        }
        return captureValue(json());
    }
    bool capture(bool value) { return !m_frames.empty() && m_frames.back() == Frame::Capture && captureValue(value); }
    bool captureValue(json value)
    {
        if (m_frames.empty() || m_frames.back() != Frame::Capture) {
            return true;
        }
        json* top = m_stack.back();
        if (top->is_object()) {
            (*top)[m_key] = std::move(value);
        } else {
            top->push_back(std::move(value));
        }
        return true;
    }
    void noteBad()
    {
        if (m_key == "ts" || m_key == "dur" || m_key == "name") {
            if (m_event.badField.empty()) {
                m_event.badField = m_key;
            }
        }
    }
    bool number(std::int64_t integer, const json::string_t* text, json value);
    bool open(bool isObject);
    bool close();
    bool finishEvent();
    std::uint32_t intern(std::vector<std::string>& table, std::unordered_map<std::string, std::uint32_t>& index,
                         const std::string& s)
    {
        auto it = index.find(s);
        if (it != index.end()) {
            return it->second;
        }
        const auto id = static_cast<std::uint32_t>(table.size());
        table.push_back(s);
        index.emplace(s, id);
        return id;
    }

    RankTrace& m_out;
    detail::ByteSource& m_source;
    ReadLimits m_limits;
    std::vector<Frame> m_frames;
    std::string m_key;
    Pending m_event;
    std::size_t m_index = 0; ///< traceEvents[i] of the event being parsed
    std::vector<json*> m_stack;
    std::unordered_map<std::string, std::uint32_t> m_nameIndex, m_threadIndex;
    std::string m_threadKey;
};

bool KinetoSax::number(std::int64_t integer, const json::string_t* text, json value)
{
    if (m_frames.empty()) {
        return true;
    }
    switch (m_frames.back()) {
    case Frame::Root:
        if (m_key == "baseTimeNanoseconds") {
            m_out.baseTimeNs = integer;
        }
        return true;
    case Frame::Event: {
        if (m_key == "ts" || m_key == "dur") {
            std::optional<TimeNs> ns;
            if (text) {
                ns = microsTextToNs(*text);
            } else if (integer >= -kMaxTraceMicros && integer <= kMaxTraceMicros) {
                ns = integer * 1000;
            }
            if (!ns || (m_key == "dur" && *ns < 0)) {
                noteBad();
                return true;
            }
            (m_key == "ts" ? m_event.ts : m_event.dur) = *ns;
            (m_key == "ts" ? m_event.hasTs : m_event.hasDur) = true;
        } else if (m_key == "pid") {
            m_event.pid = std::to_string(integer);
        } else if (m_key == "tid") {
            m_event.tid = std::to_string(integer);
        } else if (m_key == "name") {
            noteBad();
        }
        return true;
    }
    case Frame::Args: {
        const std::string& k = m_key;
        if (k == "correlation") {
            m_event.correlation = integer;
        } else if (k == "Sequence number") {
            m_event.sequence = integer;
        } else if (k == "Fwd thread id") {
            m_event.fwdThread = integer;
        } else if (k == "In msg nelems") {
            m_event.comm.inElements = integer, m_event.hasComm = true;
        } else if (k == "Out msg nelems") {
            m_event.comm.outElements = integer, m_event.hasComm = true;
        } else if (k == "Group size") {
            m_event.comm.groupSize = integer;
        } else if (k == "Src Rank") {
            m_event.comm.srcRank = integer, m_event.hasComm = true;
        } else if (k == "Dst Rank") {
            m_event.comm.dstRank = integer, m_event.hasComm = true;
        } else if (k == "Seq" || k == "seq") {
            m_event.comm.seq = integer;
        }
        return true;
    }
    case Frame::Capture:
        return captureValue(std::move(value));
    case Frame::Events:
    case Frame::Skip:
        return true;
    }
    return true;
}

bool KinetoSax::string(json::string_t& value)
{
    if (m_frames.empty()) {
        return true;
    }
    switch (m_frames.back()) {
    case Frame::Event:
        if (m_key == "ph") {
            m_event.ph = value.empty() ? '?' : value.front();
        } else if (m_key == "name") {
            m_event.name.swap(value);
            m_event.hasName = true;
        } else if (m_key == "cat") {
            m_event.cat.swap(value);
        } else if (m_key == "pid") {
            m_event.pid.swap(value);
        } else if (m_key == "tid") {
            m_event.tid.swap(value);
        } else if (m_key == "ts" || m_key == "dur") {
            noteBad();
        }
        return true;
    case Frame::Args: {
        const std::string& k = m_key;
        if (k == "Collective name") {
            m_event.comm.collective.swap(value), m_event.hasComm = true;
        } else if (k == "dtype") {
            m_event.comm.dtype.swap(value);
        } else if (k == "Process Group Name") {
            m_event.comm.processGroup.swap(value);
        } else if (k == "Process Group Description") {
            m_event.comm.processGroupDesc.swap(value);
        } else if (k == "Process Group Ranks") {
            m_event.comm.processGroupRanks.swap(value);
        }
        return true;
    }
    case Frame::Capture:
        return captureValue(std::move(value));
    case Frame::Root:
    case Frame::Events:
    case Frame::Skip:
        return true;
    }
    return true;
}

bool KinetoSax::open(bool isObject)
{
    if (m_frames.empty()) {
        m_sawEvents = !isObject;
        m_frames.push_back(isObject ? Frame::Root : Frame::Events);
        return true;
    }
    Frame next = Frame::Skip;
    switch (m_frames.back()) {
    case Frame::Root:
        if (m_key == "traceEvents" && !isObject) {
            m_sawEvents = true;
            next = Frame::Events;
        } else if (m_key == "distributedInfo" && isObject) {
            m_distributed = json::object();
            m_stack.assign(1, &m_distributed);
            next = Frame::Capture;
        }
        break;
    case Frame::Events:
        if (isObject) {
            m_event.reset();
            next = Frame::Event;
        }
        break;
    case Frame::Event:
        if (m_key == "args" && isObject) {
            next = Frame::Args;
        } else {
            noteBad();
        }
        break;
    case Frame::Capture: {
        json* top = m_stack.back();
        json child = isObject ? json::object() : json::array();
        if (top->is_object()) {
            (*top)[m_key] = std::move(child);
            m_stack.push_back(&(*top)[m_key]);
        } else {
            top->push_back(std::move(child));
            m_stack.push_back(&top->back());
        }
        next = Frame::Capture;
        break;
    }
    case Frame::Args:
    case Frame::Skip:
        break;
    }
    m_frames.push_back(next);
    return true;
}

bool KinetoSax::close()
{
    const Frame closed = m_frames.back();
    m_frames.pop_back();
    if (closed == Frame::Capture) {
        m_stack.pop_back();
    } else if (closed == Frame::Event) {
        const bool ok = finishEvent();
        ++m_index;
        return ok;
    } else if (closed == Frame::Skip && !m_frames.empty() && m_frames.back() == Frame::Events) {
        ++m_index; // a non-object element: not an event, but it keeps the indices true
        ++m_out.skippedEvents;
    }
    return true;
}

bool KinetoSax::finishEvent()
{
    Pending& e = m_event;
    auto where = [&] {
        return m_out.file + ": traceEvents[" + std::to_string(m_index) + "] (near byte " + std::to_string(m_source.consumed()) + ")";
    };
    if (!e.badField.empty()) {
        m_error = makeError(ErrorCode::ParseError,
                            "event field \"" + e.badField + "\" has the wrong type (ts: number of µs, dur: number >= 0, name: string)",
                            where());
        return false;
    }
    if (e.ph != 'X') {
        ++m_out.skippedEvents; // metadata, instants, flows, counters: not needed
        return true;
    }
    if (!e.hasTs || !e.hasName) {
        m_error = makeError(ErrorCode::ParseError, std::string("complete event without ") + (e.hasTs ? "name" : "ts"), where());
        return false;
    }
    if (e.ts > INT64_MAX - e.dur) {
        m_error = makeError(ErrorCode::ParseError, "ts + dur is out of range", where());
        return false;
    }
    if (m_out.events.size() >= m_limits.maxEvents || m_out.names.size() + m_out.threads.size() >= m_limits.maxNames) {
        m_error = makeError(ErrorCode::IoError,
                            "the trace holds more than " + std::to_string(m_limits.maxEvents) + " events (or "
                                + std::to_string(m_limits.maxNames)
                                + " distinct names): profile fewer steps (torch.profiler.schedule) and import again",
                            where());
        return false;
    }
    Event out;
    out.start = e.ts;
    out.end = e.ts + e.dur;
    out.correlation = e.correlation;
    out.sequence = e.sequence;
    out.backwardThread = static_cast<std::int8_t>(e.fwdThread == 0 || e.fwdThread == 1 ? e.fwdThread : -1);
    const std::string& c = e.cat;
    out.category = c == "cpu_op"                                ? Category::CpuOp
                   : c == "user_annotation"                     ? Category::UserAnnotation
                   : c == "gpu_user_annotation"                 ? Category::GpuUserAnnotation
                   : c == "kernel"                              ? Category::Kernel
                   : c == "gpu_memcpy" || c == "gpu_memset"     ? Category::GpuMemory
                   : c == "cuda_runtime" || c == "cuda_driver"  ? Category::Runtime
                                                                : Category::Other;
    out.name = intern(m_out.names, m_nameIndex, e.name);
    m_threadKey.assign(e.pid).append("/").append(e.tid);
    out.thread = intern(m_out.threads, m_threadIndex, m_threadKey);
    if (e.hasComm) {
        out.comm = static_cast<std::int32_t>(m_out.comms.size());
        m_out.comms.push_back(std::move(e.comm));
    }
    m_out.events.push_back(out);
    return true;
}

/// distributedInfo → rank, world size, backend, process groups. The rank and the world size
/// place the trace in the job, so a wrong one is refused (naming the field), never read as rank 0
/// or wrapped: a string ("0"), a negative number, one past the world size or past int. Other
/// fields are lenient (wrong types are ignored; a process group's out-of-range rank is dropped).
Status readDistributedInfo(const json& info, RankTrace& out)
{
    auto field = [&](const char* key, std::int64_t low, std::int64_t high, int& into) -> Status {
        auto it = info.find(key);
        if (it == info.end() || it->is_null()) {
            return ok();
        }
        const bool integer = it->is_number_integer();
        const std::int64_t v = !integer ? 0
            : it->is_number_unsigned()
            ? static_cast<std::int64_t>(std::min<std::uint64_t>(it->get<std::uint64_t>(), INT64_MAX))
            : it->get<std::int64_t>();
        if (!integer || v < low || v > high) {
            return makeError(ErrorCode::ParseError,
                std::string("distributedInfo.") + key + ": got " + it->dump() + "; allowed: an integer in "
                    + std::to_string(low) + ".." + std::to_string(high),
                out.file);
        }
        into = static_cast<int>(v);
        return ok();
    };
    if (Status s = field("world_size", 1, kMaxWorldSize, out.worldSize); !s) {
        return s;
    }
    if (Status s = field("rank", 0, out.worldSize > 0 ? out.worldSize - 1 : kMaxWorldSize - 1, out.rank); !s) {
        if (out.worldSize > 0) {
            Error e = s.error();
            e.message += " (world_size " + std::to_string(out.worldSize) + ")";
            return e;
        }
        return s;
    }
    if (auto it = info.find("backend"); it != info.end() && it->is_string()) {
        out.backend = it->get<std::string>();
    }
    auto groups = info.find("pg_config");
    if (groups == info.end() || !groups->is_array()) {
        return ok();
    }
    for (const json& g : *groups) {
        if (!g.is_object()) {
            continue;
        }
        ProcessGroup pg;
        if (auto n = g.find("pg_name"); n != g.end() && n->is_string()) {
            pg.name = n->get<std::string>();
        }
        if (auto d = g.find("pg_desc"); d != g.end() && d->is_string()) {
            pg.desc = d->get<std::string>();
        }
        if (auto r = g.find("ranks"); r != g.end() && r->is_array()) {
            for (const json& v : *r) {
                if (v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() < kMaxWorldSize) {
                    pg.ranks.push_back(v.get<int>());
                }
            }
        }
        out.groups.push_back(std::move(pg));
    }
    return ok();
}

} // namespace

Result<RankTrace> readKinetoTrace(const std::string& path, const ReadLimits& limits)
{
    try {
        RankTrace out;
        out.file = path;
        std::string openError;
        std::unique_ptr<detail::ByteSource> source = detail::ByteSource::open(path, openError);
        if (!source) {
            return makeError(ErrorCode::IoError, openError, path);
        }
        std::istream stream(source.get());
        KinetoSax sax(out, *source, limits);
        const bool parsed = json::sax_parse(stream, &sax, json::input_format_t::json, /*strict=*/true);
        if (!source->failure().empty()) {
            return makeError(ErrorCode::ParseError, source->failure(),
                             path + ": byte " + std::to_string(source->consumed()) + " of the uncompressed JSON");
        }
        if (sax.m_error) {
            return *sax.m_error;
        }
        if (!parsed) {
            return makeError(ErrorCode::ParseError, "malformed trace JSON", path);
        }
        if (!sax.m_sawEvents) {
            return makeError(ErrorCode::ParseError, std::string(kNotATrace) + ": no \"traceEvents\" array", path);
        }
        if (sax.m_distributed.is_object()) {
            if (Status placed = readDistributedInfo(sax.m_distributed, out); !placed) {
                return placed.error();
            }
        }
        return out;
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::IoError, "out of memory while reading the trace", path);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::ParseError, std::string("cannot read the trace: ") + e.what(), path);
    }
}

} // namespace bs::profiler::kineto
