#include "profiler/import/measured_bubbles.h"

#include <algorithm>

namespace bs::profiler::kineto {

namespace {

int specificity(BubbleCause c)
{
    switch (c) {
    case BubbleCause::Comm: return 4;
    case BubbleCause::Dependency: return 3;
    case BubbleCause::Flush: return 2;
    case BubbleCause::WarmUp: return 1;
    case BubbleCause::Drain: return 0;
    }
    return 0;
}

/// Intersection of per-stage idle span lists (each sorted, disjoint), cause by specificity.
std::vector<BubbleSpan> intersect(const std::vector<std::vector<BubbleSpan>>& perStage, int rank)
{
    std::vector<BubbleSpan> acc = perStage.front();
    for (std::size_t s = 1; s < perStage.size(); ++s) {
        std::vector<BubbleSpan> next;
        std::size_t i = 0, j = 0;
        const auto& other = perStage[s];
        while (i < acc.size() && j < other.size()) {
            const TimeNs lo = std::max(acc[i].start, other[j].start);
            const TimeNs hi = std::min(acc[i].end, other[j].end);
            if (lo < hi) {
                const BubbleCause c = specificity(acc[i].cause) >= specificity(other[j].cause) ? acc[i].cause : other[j].cause;
                next.push_back({lo, hi, rank, c});
            }
            (acc[i].end < other[j].end ? i : j)++;
        }
        acc = std::move(next);
    }
    for (auto& span : acc) {
        span.stage = rank;
    }
    return acc;
}

} // namespace

AnalysisOptions analysisOptionsFor(const ImportedJob& job)
{
    AnalysisOptions options;
    options.microbatchesPerBatch = std::max(1, job.microbatches);
    options.synchronous = true;
    return options;
}

JobBubbles measureBubbles(const ImportedJob& job)
{
    JobBubbles out;
    const AnalysisOptions options = analysisOptionsFor(job);
    out.stageReport = analyze(*job.trace, options);
    out.makespan = out.stageReport.makespan;
    const std::vector<BubbleSpan>& spans = out.stageReport.bubbles; // the same analysis's spans
    std::vector<std::vector<BubbleSpan>> byStage(static_cast<std::size_t>(job.stages));
    for (const auto& span : spans) {
        if (span.stage >= 0 && span.stage < job.stages) {
            byStage[static_cast<std::size_t>(span.stage)].push_back(span);
        }
    }
    for (const auto& summary : job.ranks) {
        RankBubbles rb;
        rb.rank = summary.pipelineRank;
        rb.stages = summary.stages;
        std::vector<std::vector<BubbleSpan>> mine;
        for (int s : summary.stages) {
            mine.push_back(byStage[static_cast<std::size_t>(s)]);
        }
        std::vector<BubbleSpan> idle = mine.empty() ? std::vector<BubbleSpan>{} : intersect(mine, rb.rank);
        for (const auto& span : idle) {
            rb.idle += span.end - span.start;
            rb.idleByCause[static_cast<std::size_t>(span.cause)] += span.end - span.start;
        }
        rb.busy = out.makespan - rb.idle;
        rb.bubbleFraction = out.makespan > 0 ? static_cast<double>(rb.idle) / static_cast<double>(out.makespan) : 0.0;
        for (const Transfer& t : job.transfers) {
            if (t.dstRank == rb.rank) {
                rb.recvTransfer += t.transferTime();
                rb.recvWaiting += t.recvWaiting();
                ++rb.transfersIn;
            }
            if (t.srcRank == rb.rank) {
                rb.sendTransfer += t.transferTime();
                rb.sendWaiting += t.sendWaiting();
                ++rb.transfersOut;
            }
        }
        for (int c = 0; c < kBubbleCauseCount; ++c) {
            out.idleByCause[static_cast<std::size_t>(c)] += rb.idleByCause[static_cast<std::size_t>(c)];
        }
        out.spans.insert(out.spans.end(), idle.begin(), idle.end());
        out.ranks.push_back(std::move(rb));
    }
    TimeNs total = 0;
    for (const auto& r : out.ranks) {
        total += r.idle;
    }
    const double capacity = static_cast<double>(out.ranks.size()) * static_cast<double>(out.makespan);
    out.bubbleFraction = capacity > 0 ? static_cast<double>(total) / capacity : 0.0;
    return out;
}

} // namespace bs::profiler::kineto
