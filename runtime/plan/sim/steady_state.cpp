#include "runtime/plan/sim/steady_state.h"

#include "profiler/analysis/analyze.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <vector>

namespace bs::runtime {

namespace {

using profiler::BubbleSpan;
using profiler::Report;
using profiler::StageReport;
using profiler::TimeNs;

// A figure that grows by its increment from `shorter` to `longer` for `extra` more batches.
template<typename T>
T grow(T shorter, T longer, int extra)
{
    return static_cast<T>(longer + static_cast<T>(extra) * (longer - shorter));
}

template<typename T, std::size_t n>
std::array<T, n> grow(const std::array<T, n>& shorter, const std::array<T, n>& longer, int extra)
{
    std::array<T, n> out{};
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = grow(shorter[i], longer[i], extra);
    }
    return out;
}

bool sameSpan(const BubbleSpan& a, const BubbleSpan& b)
{
    return a.start == b.start && a.end == b.end && a.stage == b.stage && a.cause == b.cause;
}

BubbleSpan moved(BubbleSpan span, TimeNs by)
{
    span.start += by;
    span.end += by;
    return span;
}

// One stage's spans: `longer`'s are `shorter`'s with the repeated batch's inserted at some point
// and everything after it moved by `shift`. Appends them extended by `extra` batches to `out`.
bool extendSpans(const BubbleSpan* shorter, std::size_t ns, const BubbleSpan* longer, std::size_t nl, TimeNs shift,
    int extra, std::vector<BubbleSpan>& out)
{
    if (nl < ns) {
        return false;
    }
    std::size_t prefix = 0;
    while (prefix < ns && sameSpan(shorter[prefix], longer[prefix])) {
        ++prefix;
    }
    std::size_t suffix = 0;
    while (suffix < ns && sameSpan(moved(shorter[ns - 1 - suffix], shift), longer[nl - 1 - suffix])) {
        ++suffix;
    }
    if (prefix + suffix < ns) {
        return false;
    }
    const std::size_t split = ns - suffix; // shorter[split..] moved is longer's tail
    const std::size_t repeated = nl - ns; // the spans of the inserted batch: longer[split, split + repeated)
    out.insert(out.end(), shorter, shorter + split);
    for (int k = 0; k <= extra; ++k) {
        for (std::size_t i = split; i < split + repeated; ++i) {
            out.push_back(moved(longer[i], static_cast<TimeNs>(k) * shift));
        }
    }
    for (std::size_t i = split; i < ns; ++i) {
        out.push_back(moved(shorter[i], static_cast<TimeNs>(extra + 1) * shift));
    }
    return true;
}

// Where each stage's spans begin in `report.bubbles` (stages in order; one more entry: the end).
std::vector<std::size_t> spanStarts(const Report& report)
{
    std::vector<std::size_t> starts(static_cast<std::size_t>(report.stages) + 1, report.bubbles.size());
    std::size_t i = 0;
    for (int s = 0; s < report.stages; ++s) {
        starts[static_cast<std::size_t>(s)] = i;
        while (i < report.bubbles.size() && report.bubbles[i].stage == s) {
            ++i;
        }
    }
    return starts;
}

std::optional<StageReport> extendStage(const StageReport& s, const StageReport& l, int extra, TimeNs makespan)
{
    if (s.stage != l.stage) {
        return std::nullopt;
    }
    StageReport out;
    out.stage = l.stage;
    out.busy = grow(s.busy, l.busy, extra);
    out.idle = grow(s.idle, l.idle, extra);
    out.span = grow(s.span, l.span, extra);
    out.idleByCause = grow(s.idleByCause, l.idleByCause, extra);
    out.bubbleFraction = makespan > 0 ? static_cast<double>(out.idle) / static_cast<double>(makespan) : 0.0;
    out.peakInflight = grow(s.peakInflight, l.peakInflight, extra);
    out.peakWeightVersions = grow(s.peakWeightVersions, l.peakWeightVersions, extra);
    out.peakMemoryBytes = grow(s.peakMemoryBytes, l.peakMemoryBytes, extra);
    out.maxVersionLag = grow(s.maxVersionLag, l.maxVersionLag, extra);
    out.busyByKind = grow(s.busyByKind, l.busyByKind, extra);
    std::map<int, int> keys = l.versionLagHistogram;
    keys.insert(s.versionLagHistogram.begin(), s.versionLagHistogram.end());
    for (const auto& [lag, unused] : keys) {
        const auto count = [lag = lag](const std::map<int, int>& h) {
            const auto it = h.find(lag);
            return it == h.end() ? 0 : it->second;
        };
        const int n = grow(count(s.versionLagHistogram), count(l.versionLagHistogram), extra);
        if (n < 0) {
            return std::nullopt;
        }
        if (n > 0) {
            out.versionLagHistogram[lag] = n;
        }
    }
    return out;
}

} // namespace

std::optional<Report> extendReport(const Report& shorter, const Report& longer, int extra, bool spans)
{
    const TimeNs shift = longer.makespan - shorter.makespan;
    if (extra < 0 || shift <= 0 || shorter.stages != longer.stages || shorter.perStage.size() != longer.perStage.size()
        || (shorter.steadyBusy < 0) != (longer.steadyBusy < 0)) {
        return std::nullopt;
    }
    Report out;
    out.stages = longer.stages;
    out.makespan = grow(shorter.makespan, longer.makespan, extra);
    out.totalIdle = grow(shorter.totalIdle, longer.totalIdle, extra);
    out.steadyStart = grow(shorter.steadyStart, longer.steadyStart, extra);
    out.steadyEnd = grow(shorter.steadyEnd, longer.steadyEnd, extra);
    out.steadyBusy = longer.steadyBusy < 0 ? -1 : grow(shorter.steadyBusy, longer.steadyBusy, extra);
    out.microbatches = grow(shorter.microbatches, longer.microbatches, extra);
    out.idleByCause = grow(shorter.idleByCause, longer.idleByCause, extra);
    for (std::size_t i = 0; i < longer.perStage.size(); ++i) {
        auto stage = extendStage(shorter.perStage[i], longer.perStage[i], extra, out.makespan);
        if (!stage) {
            return std::nullopt;
        }
        out.perStage.push_back(*stage);
    }
    const std::vector<std::size_t> s = spanStarts(shorter), l = spanStarts(longer);
    if (s.back() != shorter.bubbles.size() || l.back() != longer.bubbles.size()) {
        return std::nullopt; // spans not stage by stage in stage order
    }
    const int copies = spans ? extra : 0; // the spans' check is the same either way
    out.bubbles.reserve(longer.bubbles.size()
        + static_cast<std::size_t>(copies)
            * (longer.bubbles.size() - std::min(longer.bubbles.size(), shorter.bubbles.size())));
    for (std::size_t st = 0; st + 1 < s.size(); ++st) {
        if (!extendSpans(shorter.bubbles.data() + s[st], s[st + 1] - s[st], longer.bubbles.data() + l[st],
                l[st + 1] - l[st], shift, copies, out.bubbles)) {
            return std::nullopt;
        }
    }
    if (!spans) {
        out.bubbles.clear();
    }
    profiler::computeFractions(out);
    return out;
}

bool sameReport(const Report& a, const Report& b)
{
    const auto sameStage = [](const StageReport& x, const StageReport& y) {
        return x.stage == y.stage && x.busy == y.busy && x.idle == y.idle && x.span == y.span
            && x.idleByCause == y.idleByCause && x.bubbleFraction == y.bubbleFraction
            && x.peakInflight == y.peakInflight && x.peakWeightVersions == y.peakWeightVersions
            && x.peakMemoryBytes == y.peakMemoryBytes && x.maxVersionLag == y.maxVersionLag
            && x.versionLagHistogram == y.versionLagHistogram && x.busyByKind == y.busyByKind;
    };
    if (a.stages != b.stages || a.makespan != b.makespan || a.totalIdle != b.totalIdle
        || a.bubbleFraction != b.bubbleFraction || a.steadyStart != b.steadyStart || a.steadyEnd != b.steadyEnd
        || a.steadyBubbleFraction != b.steadyBubbleFraction || a.steadyBusy != b.steadyBusy
        || a.spanBubbleFraction != b.spanBubbleFraction || a.utilization != b.utilization
        || a.microbatches != b.microbatches || a.idleByCause != b.idleByCause || a.perStage.size() != b.perStage.size()
        || a.bubbles.size() != b.bubbles.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.perStage.size(); ++i) {
        if (!sameStage(a.perStage[i], b.perStage[i])) {
            return false;
        }
    }
    for (std::size_t i = 0; i < a.bubbles.size(); ++i) {
        if (!sameSpan(a.bubbles[i], b.bubbles[i])) {
            return false;
        }
    }
    return true;
}

} // namespace bs::runtime
