#include "app/cli/option_checks.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace bs::cli {

namespace {

std::string number(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

} // namespace

CLI::Validator finiteIn(double lo, double hi, const std::string& unit)
{
    const std::string allowed = "allowed: a finite number in [" + number(lo) + ", " + number(hi) + "]"
        + (unit.empty() ? "" : " " + unit);
    return CLI::Validator(
        [lo, hi, allowed](std::string& text) -> std::string {
            double v = 0;
            const char* end = text.data() + text.size();
            const auto [ptr, ec] = std::from_chars(text.data(), end, v);
            if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v) || v < lo || v > hi) {
                return "'" + text + "' is not " + allowed.substr(std::string("allowed: ").size());
            }
            return {};
        },
        "FINITE in [" + number(lo) + ", " + number(hi) + "]");
}

CLI::Validator integerIn(long long lo, long long hi)
{
    const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
    return CLI::Validator(
        [lo, hi, range](std::string& text) -> std::string {
            long long v = 0;
            const char* end = text.data() + text.size();
            const auto [ptr, ec] = std::from_chars(text.data(), end, v);
            if (text.empty() || ec != std::errc() || ptr != end || v < lo || v > hi) {
                return "'" + text + "' is not allowed; allowed: an integer in " + range;
            }
            return {};
        },
        "INT in " + range);
}

CLI::Validator oneOf(std::vector<std::string> allowed, const std::string& field)
{
    std::string list;
    for (const std::string& a : allowed) {
        list += (list.empty() ? "" : ", ") + a;
    }
    const std::string names = list;
    return CLI::Validator(
        [allowed = std::move(allowed), list, field](std::string& text) -> std::string {
            for (const std::string& a : allowed) {
                if (text == a) {
                    return {};
                }
            }
            return "'" + text + "' is not allowed; allowed: " + list + " (" + field + ")";
        },
        names);
}

void refuseEmptyValues(CLI::App& app)
{
    for (CLI::Option* option : app.get_options()) {
        if (option->get_type_size() == 0 || option->get_positional()) {
            continue; // flags take no value; a positional's own checks apply
        }
        option->check(CLI::Validator(
            [](std::string& text) -> std::string { return text.empty() ? "an empty value is not allowed" : ""; },
            "", "NONEMPTY"));
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        refuseEmptyValues(*sub);
    }
}

} // namespace bs::cli
