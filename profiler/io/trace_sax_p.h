#pragma once
// A SAX handler for nlohmann::json::sax_parse that turns each element of "traceEvents" into a
// RawEvent and hands it to a callback, and builds a small JSON tree for "otherData" only. It never
// holds more than one event, and allocates almost nothing per event.

#include "profiler/io/raw_event_p.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace bs::profiler::detail {

class TraceSax
{
public:
    using json = nlohmann::json;
    /// Return false to stop parsing (the caller recorded why).
    using EventSink = std::function<bool(const RawEvent&)>;
    using MetaSink = std::function<bool(const json&)>;

    TraceSax(EventSink onEvent, MetaSink onMeta);

    // nlohmann's SAX interface.
    bool null();
    bool boolean(bool value);
    bool number_integer(json::number_integer_t value);
    bool number_unsigned(json::number_unsigned_t value);
    bool number_float(json::number_float_t value, const json::string_t& text);
    bool string(json::string_t& value);
    bool binary(json::binary_t& value);
    bool start_object(std::size_t elements);
    bool end_object();
    bool start_array(std::size_t elements);
    bool end_array();
    bool key(json::string_t& value);
    bool parse_error(std::size_t position, const std::string& lastToken, const nlohmann::detail::exception& ex);

    /// Set when the JSON itself was malformed: (byte, what()).
    const std::optional<std::pair<std::size_t, std::string>>& syntaxError() const { return m_syntaxError; }
    /// True when the document had a top-level "traceEvents" array or was an array itself.
    bool sawEventArray() const { return m_sawEventArray; }

private:
    enum class Frame : std::uint8_t
    {
        RootObject,
        Events, ///< the traceEvents array (or the root array)
        Event, ///< one element object
        Args, ///< its "args"
        Meta, ///< otherData and everything in it: built as JSON
        Skip, ///< anything else
        BadElement, ///< a non-object element of Events (an array)
    };

    bool scalar(RawField field, json value);
    bool open(bool isObject);
    RawField* eventField();
    void metaInsert(json value);

    EventSink m_onEvent;
    MetaSink m_onMeta;
    std::vector<Frame> m_frames;
    std::string m_key;
    RawEvent m_event;
    json m_meta;
    std::vector<json*> m_metaStack;
    bool m_sawEventArray = false;
    std::optional<std::pair<std::size_t, std::string>> m_syntaxError;
};

} // namespace bs::profiler::detail
