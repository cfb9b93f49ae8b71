#pragma once
// One trace event as the SAX reader saw it: only the members Bubblescope uses, each with its JSON
// type, so the converter can give exact error messages without a JSON tree per event.

#include <cmath>
#include <cstdint>
#include <string>

namespace bs::profiler::detail {

struct RawField
{
    enum class Type : std::uint8_t
    {
        Missing,
        Integer, ///< fits int64
        Unsigned, ///< above int64's range
        Float,
        String,
        Other, ///< null, bool, object or array
    };

    Type type = Type::Missing;
    std::int64_t integer = 0;
    std::uint64_t unsignedValue = 0;
    double real = 0.0;
    std::string text; ///< String: the value; Float: the number as written

    bool present() const { return type != Type::Missing; }
    bool isNumber() const { return type == Type::Integer || type == Type::Unsigned || type == Type::Float; }
    bool isInteger() const { return type == Type::Integer || type == Type::Unsigned; }
    double asDouble() const
    {
        switch (type) {
        case Type::Integer:
            return static_cast<double>(integer);
        case Type::Unsigned:
            return static_cast<double>(unsignedValue);
        case Type::Float:
            return real;
        default:
            return std::nan("");
        }
    }
    /// The value as JSON text for messages.
    std::string dump() const
    {
        switch (type) {
        case Type::Integer:
            return std::to_string(integer);
        case Type::Unsigned:
            return std::to_string(unsignedValue);
        case Type::Float:
            return std::to_string(real);
        case Type::String:
            return "\"" + text + "\"";
        default:
            return "(non-scalar)";
        }
    }
};

struct RawEvent
{
    bool isObject = true;
    RawField ph, name, ts, dur, pid, tid;
    RawField args; ///< Other when it is an object (then the members below are filled)
    bool argsIsObject = false;
    RawField mb, version, bytes, aux;

    void reset() { *this = RawEvent{}; }
};

} // namespace bs::profiler::detail
