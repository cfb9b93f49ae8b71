#include "ui/timeline/event_search.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

namespace bs::ui {

namespace {

using profiler::EventKind;

std::optional<EventKind> kindOfLetter(char c)
{
    switch (std::toupper(static_cast<unsigned char>(c))) {
    case 'F': return EventKind::Forward;
    case 'B': return EventKind::Backward;
    case 'I': return EventKind::BackwardInput;
    case 'W': return EventKind::BackwardWeight;
    case 'U': return EventKind::Update;
    default: return std::nullopt;
    }
}

std::optional<EventKind> kindOfWord(const std::string& w)
{
    if (w == "forward" || w == "fwd") return EventKind::Forward;
    if (w == "backward" || w == "bwd") return EventKind::Backward;
    if (w == "backward-input" || w == "input-grad") return EventKind::BackwardInput;
    if (w == "backward-weight" || w == "weight-grad") return EventKind::BackwardWeight;
    if (w == "update" || w == "optimizer") return EventKind::Update;
    return std::nullopt;
}

bool isNumber(const std::string& w)
{
    return !w.empty() && w.size() < 10 && std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

} // namespace

bool EventQuery::matches(const profiler::TraceEvent& e, const StageMatcher& isWorkOf) const
{
    if (stage && (isWorkOf ? !isWorkOf(e, *stage) : e.stage != *stage)) {
        return false;
    }
    if (kind) {
        // "B" also finds the split backward halves of zero-bubble schedules.
        const bool backward = *kind == EventKind::Backward
            && (e.kind == EventKind::BackwardInput || e.kind == EventKind::BackwardWeight);
        if (e.kind != *kind && !backward) {
            return false;
        }
    }
    return !microbatch || e.microbatch == *microbatch;
}

std::optional<EventQuery> parseEventQuery(const std::string& text)
{
    std::string lower;
    for (char c : text) {
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    EventQuery q;
    static const std::regex compact(R"(^(\d+)([fbiwu])(\d*)$)");
    std::istringstream words(lower);
    std::vector<std::string> tokens;
    for (std::string w; words >> w;) {
        tokens.push_back(w);
    }
    if (tokens.empty()) {
        return std::nullopt;
    }
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::string& w = tokens[i];
        std::smatch m;
        if (std::regex_match(w, m, compact)) {
            q.stage = std::stoul(m[1]);
            q.kind = kindOfLetter(m[2].str()[0]);
            if (m[3].length() > 0) {
                q.microbatch = std::stoll(m[3]);
            }
        } else if ((w == "stage" || w == "s") && i + 1 < tokens.size() && isNumber(tokens[i + 1])) {
            q.stage = std::stoul(tokens[++i]);
        } else if ((w == "mb" || w == "micro-batch" || w == "microbatch") && i + 1 < tokens.size()
                   && isNumber(tokens[i + 1])) {
            q.microbatch = std::stoll(tokens[++i]);
        } else if (auto kind = kindOfWord(w)) {
            q.kind = kind;
        } else if (w.size() == 1 && kindOfLetter(w[0])) {
            q.kind = kindOfLetter(w[0]);
        } else if (isNumber(w)) {
            q.microbatch = std::stoll(w); // a bare number: the micro-batch
        } else {
            return std::nullopt;
        }
    }
    return q;
}

std::vector<std::size_t> findEvents(
    const profiler::TraceSnapshot& trace, const EventQuery& query, const StageMatcher& isWorkOf)
{
    std::vector<std::size_t> hits;
    for (std::size_t i = 0; i < trace.size(); ++i) {
        const profiler::TraceEvent& e = trace[i];
        if (e.isCompute() && e.kind != EventKind::Marker && e.kind != EventKind::Kernel && query.matches(e, isWorkOf)) {
            hits.push_back(i);
        }
    }
    std::stable_sort(hits.begin(), hits.end(), [&](std::size_t a, std::size_t b) { return trace[a].start < trace[b].start; });
    return hits;
}

} // namespace bs::ui
