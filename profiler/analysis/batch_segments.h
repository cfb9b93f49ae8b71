#pragma once
// Internal to analysis: which global batch a micro-batch belongs to, across the settings a run
// went through (AnalysisOptions::laterSettings), and whether that batch flushes.

#include "profiler/analysis/report.h"

#include <algorithm>
#include <vector>

namespace bs::profiler::detail {

class BatchSegments
{
public:
    struct Segment
    {
        int firstMicrobatch = 0;
        int firstBatch = 0;
        int m = 1;
        bool synchronous = true;
        friend bool operator==(const Segment&, const Segment&) = default;
    };

    explicit BatchSegments(const AnalysisOptions& options)
    {
        // Batch numbering across settings: segment k starts at batch firstBatch.
        m_segments.push_back({0, 0, std::max(1, options.microbatchesPerBatch), options.synchronous});
        for (const auto& later : options.laterSettings) {
            const Segment& prev = m_segments.back();
            const int span = std::max(0, later.firstMicrobatch - prev.firstMicrobatch);
            m_segments.push_back({later.firstMicrobatch, prev.firstBatch + (span + prev.m - 1) / prev.m,
                std::max(1, later.microbatchesPerBatch), later.synchronous});
        }
    }

    const Segment& segmentOf(int mb) const
    {
        std::size_t k = 0;
        while (k + 1 < m_segments.size() && m_segments[k + 1].firstMicrobatch <= mb) {
            ++k;
        }
        return m_segments[k];
    }
    int batchOf(int mb) const
    {
        const Segment& seg = segmentOf(mb);
        return seg.firstBatch + (mb - seg.firstMicrobatch) / seg.m;
    }
    bool startsBatch(int mb) const
    {
        const Segment& seg = segmentOf(mb);
        return (mb - seg.firstMicrobatch) % seg.m == 0;
    }

    /// The same numbering (and flushes) of every micro-batch.
    friend bool operator==(const BatchSegments&, const BatchSegments&) = default;

private:
    std::vector<Segment> m_segments; ///< the settings in force from each micro-batch on
};

} // namespace bs::profiler::detail
