#pragma once
// A small buffered JSON text writer for the trace writer: appends tokens to a string and hands
// full 1 MiB blocks to an ostream, so writing 10^6 events never holds more than one block.

#include <charconv>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace bs::profiler::detail {

class JsonOut
{
public:
    explicit JsonOut(std::ostream& out)
        : m_out(out)
    {
        m_buffer.reserve(kBlock + 4096);
    }

    JsonOut& raw(std::string_view text)
    {
        m_buffer.append(text);
        maybeFlush();
        return *this;
    }

    JsonOut& integer(std::int64_t v)
    {
        char buf[24];
        const auto res = std::to_chars(buf, buf + sizeof buf, v);
        m_buffer.append(buf, res.ptr);
        return *this;
    }

    /// Nanoseconds as microseconds with exactly three decimals: 1500 -> "1.500", -7 -> "-0.007".
    JsonOut& micros(std::int64_t ns)
    {
        // Work in unsigned so INT64_MIN is representable.
        const bool negative = ns < 0;
        const std::uint64_t mag = negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
        if (negative) {
            m_buffer += '-';
        }
        char buf[24];
        const auto res = std::to_chars(buf, buf + sizeof buf, mag / 1000);
        m_buffer.append(buf, res.ptr);
        const auto frac = static_cast<unsigned>(mag % 1000);
        m_buffer += '.';
        m_buffer += static_cast<char>('0' + frac / 100);
        m_buffer += static_cast<char>('0' + frac / 10 % 10);
        m_buffer += static_cast<char>('0' + frac % 10);
        return *this;
    }

    /// A quoted JSON string; control characters, quotes and backslashes escaped.
    JsonOut& string(std::string_view s)
    {
        m_buffer += '"';
        for (const char c : s) {
            const auto u = static_cast<unsigned char>(c);
            if (c == '"' || c == '\\') {
                m_buffer += '\\';
                m_buffer += c;
            } else if (u < 0x20) {
                static constexpr char kHex[] = "0123456789abcdef";
                m_buffer += "\\u00";
                m_buffer += kHex[u >> 4];
                m_buffer += kHex[u & 0xF];
            } else {
                m_buffer += c;
            }
        }
        m_buffer += '"';
        maybeFlush();
        return *this;
    }

    void flush()
    {
        m_out.write(m_buffer.data(), static_cast<std::streamsize>(m_buffer.size()));
        m_buffer.clear();
    }

private:
    static constexpr std::size_t kBlock = 1u << 20;

    void maybeFlush()
    {
        if (m_buffer.size() >= kBlock) {
            flush();
        }
    }

    std::ostream& m_out;
    std::string m_buffer;
};

} // namespace bs::profiler::detail
