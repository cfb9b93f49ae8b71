#include "profiler/io/trace_sax_p.h"

namespace bs::profiler::detail {

namespace {

RawField integerField(std::int64_t v)
{
    RawField f;
    f.type = RawField::Type::Integer;
    f.integer = v;
    return f;
}

RawField otherField()
{
    RawField f;
    f.type = RawField::Type::Other;
    return f;
}

} // namespace

TraceSax::TraceSax(EventSink onEvent, MetaSink onMeta)
    : m_onEvent(std::move(onEvent))
    , m_onMeta(std::move(onMeta))
{
    m_frames.reserve(16);
}

RawField* TraceSax::eventField()
{
    const Frame top = m_frames.back();
    if (top == Frame::Event) {
        if (m_key == "ph") {
            return &m_event.ph;
        }
        if (m_key == "name") {
            return &m_event.name;
        }
        if (m_key == "ts") {
            return &m_event.ts;
        }
        if (m_key == "dur") {
            return &m_event.dur;
        }
        if (m_key == "pid") {
            return &m_event.pid;
        }
        if (m_key == "tid") {
            return &m_event.tid;
        }
        if (m_key == "args") {
            return &m_event.args;
        }
    } else if (top == Frame::Args) {
        if (m_key == "mb") {
            return &m_event.mb;
        }
        if (m_key == "version") {
            return &m_event.version;
        }
        if (m_key == "bytes") {
            return &m_event.bytes;
        }
        if (m_key == "aux") {
            return &m_event.aux;
        }
    }
    return nullptr;
}

void TraceSax::metaInsert(json value)
{
    json* top = m_metaStack.back();
    if (top->is_object()) {
        (*top)[m_key] = std::move(value);
    } else {
        top->push_back(std::move(value));
    }
}

bool TraceSax::scalar(RawField field, json value)
{
    if (m_frames.empty()) {
        return true; // a scalar document: reported as "not a Chrome trace" afterwards
    }
    switch (m_frames.back()) {
    case Frame::Events: {
        RawEvent notObject;
        notObject.isObject = false;
        return m_onEvent(notObject);
    }
    case Frame::Event:
    case Frame::Args:
        if (RawField* f = eventField()) {
            *f = std::move(field);
        }
        return true;
    case Frame::Meta:
        metaInsert(std::move(value));
        return true;
    case Frame::RootObject:
    case Frame::Skip:
    case Frame::BadElement:
        return true;
    }
    return true;
}

bool TraceSax::null()
{
    return scalar(otherField(), nullptr);
}
bool TraceSax::boolean(bool value)
{
    return scalar(otherField(), value);
}
bool TraceSax::binary(json::binary_t&)
{
    return scalar(otherField(), nullptr);
}

bool TraceSax::number_integer(json::number_integer_t value)
{
    return scalar(integerField(value), m_frames.empty() || m_frames.back() != Frame::Meta ? json() : json(value));
}

bool TraceSax::number_unsigned(json::number_unsigned_t value)
{
    RawField f;
    if (value <= static_cast<std::uint64_t>(INT64_MAX)) {
        f = integerField(static_cast<std::int64_t>(value));
    } else {
        f.type = RawField::Type::Unsigned;
        f.unsignedValue = value;
    }
    return scalar(std::move(f), m_frames.empty() || m_frames.back() != Frame::Meta ? json() : json(value));
}

bool TraceSax::number_float(json::number_float_t value, const json::string_t& text)
{
    RawField f;
    f.type = RawField::Type::Float;
    f.real = value;
    f.text = text; // the exact digits: timestamps are converted from the text, not the double
    return scalar(std::move(f), m_frames.empty() || m_frames.back() != Frame::Meta ? json() : json(value));
}

bool TraceSax::string(json::string_t& value)
{
    const bool meta = !m_frames.empty() && m_frames.back() == Frame::Meta;
    RawField f;
    f.type = RawField::Type::String;
    if (!meta) {
        f.text = value;
    }
    return scalar(std::move(f), meta ? json(std::move(value)) : json());
}

bool TraceSax::key(json::string_t& value)
{
    m_key = value;
    return true;
}

bool TraceSax::open(bool isObject)
{
    if (m_frames.empty()) {
        m_sawEventArray = !isObject;
        m_frames.push_back(isObject ? Frame::RootObject : Frame::Events);
        return true;
    }
    Frame next = Frame::Skip;
    switch (m_frames.back()) {
    case Frame::RootObject:
        if (m_key == "traceEvents" && !isObject) {
            m_sawEventArray = true;
            next = Frame::Events;
        } else if (m_key == "otherData") {
            m_meta = isObject ? json::object() : json::array();
            m_metaStack.assign(1, &m_meta);
            next = Frame::Meta;
        }
        break;
    case Frame::Events:
        if (isObject) {
            m_event.reset();
            next = Frame::Event;
        } else {
            next = Frame::BadElement;
        }
        break;
    case Frame::Event:
        if (m_key == "args" && isObject) {
            m_event.args = otherField();
            m_event.argsIsObject = true;
            next = Frame::Args;
        } else if (RawField* f = eventField()) {
            *f = otherField();
        }
        break;
    case Frame::Args:
        if (RawField* f = eventField()) {
            *f = otherField();
        }
        break;
    case Frame::Meta: {
        metaInsert(isObject ? json::object() : json::array());
        json* top = m_metaStack.back();
        m_metaStack.push_back(top->is_object() ? &(*top)[m_key] : &top->back());
        next = Frame::Meta;
        break;
    }
    case Frame::Skip:
    case Frame::BadElement:
        break;
    }
    m_frames.push_back(next);
    return true;
}

bool TraceSax::start_object(std::size_t)
{
    return open(true);
}
bool TraceSax::start_array(std::size_t)
{
    return open(false);
}

bool TraceSax::end_object()
{
    return end_array();
}

bool TraceSax::end_array()
{
    const Frame closed = m_frames.back();
    m_frames.pop_back();
    switch (closed) {
    case Frame::Event:
        return m_onEvent(m_event);
    case Frame::BadElement: {
        RawEvent notObject;
        notObject.isObject = false;
        return m_onEvent(notObject);
    }
    case Frame::Meta:
        m_metaStack.pop_back();
        return m_metaStack.empty() ? m_onMeta(m_meta) : true;
    case Frame::RootObject:
    case Frame::Events:
    case Frame::Args:
    case Frame::Skip:
        return true;
    }
    return true;
}

bool TraceSax::parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex)
{
    m_syntaxError = std::make_pair(position, std::string(ex.what()));
    return false;
}

} // namespace bs::profiler::detail
