#include "profiler/io/micros.h"

#include <charconv>
#include <cmath>

namespace bs::profiler {

namespace {

/// "[-]digits[.d{1,3}]" exactly; nullopt for every other form.
std::optional<TimeNs> exactDecimal(std::string_view text)
{
    const bool negative = !text.empty() && text.front() == '-';
    const std::string_view body = text.substr(negative ? 1 : 0);
    const std::size_t dot = body.find('.');
    const std::string_view whole = body.substr(0, dot);
    const std::string_view frac = dot == std::string_view::npos ? std::string_view() : body.substr(dot + 1);
    if (whole.empty() || (dot != std::string_view::npos && (frac.empty() || frac.size() > 3))) {
        return std::nullopt;
    }
    std::int64_t micros = 0;
    const auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), micros);
    if (ec != std::errc() || end != whole.data() + whole.size() || micros > kMaxTraceMicros) {
        return std::nullopt;
    }
    std::int64_t nanos = 0;
    std::int64_t scale = 100;
    for (const char c : frac) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        nanos += (c - '0') * scale;
        scale /= 10;
    }
    const TimeNs value = micros * 1000 + nanos;
    return negative ? -value : value;
}

} // namespace

std::optional<TimeNs> microsTextToNs(std::string_view text)
{
    if (std::optional<TimeNs> exact = exactDecimal(text)) {
        return exact;
    }
    double micros = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), micros);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(micros)
        || std::abs(micros) > static_cast<double>(kMaxTraceMicros)) {
        return std::nullopt;
    }
    return static_cast<TimeNs>(std::llround(micros * 1000.0));
}

} // namespace bs::profiler
