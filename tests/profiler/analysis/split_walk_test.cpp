// analyze() walks a long trace's first pass in two halves at once (the lanes' memory on one thread,
// the rest on another), and its second pass in two halves too: the half after a resume point of
// the first pass takes each lane up from the state the point restores. The report must be the
// one a single walk gives (analyzeOnOneThread()), to the last idle span, whatever the lanes do
// around the split: run across it, start or stop before it or after it, hold no events at all,
// overlap their own events, or come out of start order (those are swept from a sorted index).

#include "profiler/analysis/analyze.h"
#include "profiler/analysis/first_pass.h"
#include "profiler/analysis/report_json.h"
#include "tests/support/same_report.h"
#include "tests/support/trace_events.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

namespace bs::profiler {
namespace {

using test::expectSameReport;

using test::ev;
using test::send;

constexpr int kLanes = 6;
constexpr int kMicrobatchesPerBatch = 8;

// Each lane's events one after another with random gaps (a few overlapping the one before), F then
// B or I and W per micro-batch and an update per batch, a send into the next lane after each F;
// merged in start order as producers append. Lane 3 starts two thirds of the way in, lane 4 stops
// at a tenth, lane 5 holds nothing; `shuffleLane` (when >= 0) has its events swapped out of order.
std::vector<TraceEvent> randomTrace(std::uint32_t seed, std::size_t perLane, int shuffleLane)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<TimeNs> gap(0, 900), length(100, 1'000);
    std::bernoulli_distribution splitBackward(0.4), overlapping(0.02);
    std::vector<std::vector<TraceEvent>> lanes(kLanes);
    const TimeNs span = static_cast<TimeNs>(perLane) * 1'200;
    for (int lane = 0; lane < kLanes - 1; ++lane) {
        TimeNs t = lane == 3 ? span * 2 / 3 : gap(rng);
        const std::size_t count = lane == 4 ? perLane / 10 : perLane;
        auto& out = lanes[static_cast<std::size_t>(lane)];
        auto at = [&](EventKind kind, int mb) {
            const TimeNs start = overlapping(rng) && !out.empty() ? out.back().end - 50 : t + gap(rng);
            out.push_back(ev(lane, kind, mb, start, start + length(rng)));
            t = std::max(t, out.back().end);
            return out.back();
        };
        for (int mb = 0; out.size() < count; ++mb) {
            const TraceEvent f = at(EventKind::Forward, mb);
            out.push_back(send(lane, (lane + 1) % kLanes, mb, f.end, f.end + gap(rng)));
            if (splitBackward(rng)) {
                at(EventKind::BackwardInput, mb);
                at(EventKind::BackwardWeight, mb);
            } else {
                at(EventKind::Backward, mb);
            }
            if (mb % kMicrobatchesPerBatch == kMicrobatchesPerBatch - 1) {
                at(EventKind::Update, mb / kMicrobatchesPerBatch);
            }
        }
    }
    std::vector<TraceEvent> trace;
    for (const auto& lane : lanes) {
        trace.insert(trace.end(), lane.begin(), lane.end());
    }
    std::stable_sort(
        trace.begin(), trace.end(), [](const TraceEvent& a, const TraceEvent& b) { return a.start < b.start; });
    if (shuffleLane >= 0) {
        std::vector<std::size_t> mine;
        for (std::size_t i = 0; i < trace.size(); ++i) {
            if (trace[i].stage == shuffleLane && trace[i].isCompute()) {
                mine.push_back(i);
            }
        }
        for (std::size_t k = 0; k + 7 < mine.size(); k += 97) {
            std::swap(trace[mine[k]], trace[mine[k + 7]]);
        }
    }
    return trace;
}

TraceSnapshot snapshotOf(const std::vector<TraceEvent>& events)
{
    TraceMeta meta;
    meta.stages = kLanes;
    TraceStore store(meta);
    for (const TraceEvent& e : events) {
        store.append(e);
    }
    return *store.snapshot();
}

TEST(SplitSecondWalk, ReportEqualsOneWalksAroundEverySplit)
{
    AnalysisOptions options;
    options.microbatchesPerBatch = kMicrobatchesPerBatch;
    for (std::uint32_t seed = 1; seed <= 4; ++seed) {
        for (int shuffleLane : {-1, 1}) {
            SCOPED_TRACE(::testing::Message() << "seed " << seed << ", lane out of order " << shuffleLane);
            // 70 000-100 000 events: over the 32 768 from which the second walk is split and the
            // 65 536 from which the first is.
            const TraceSnapshot trace = snapshotOf(randomTrace(seed, 20'000 + 2'000 * seed, shuffleLane));
            ASSERT_GE(trace.size(), 70'000u);
            const Report single = analyzeOnOneThread(trace, options);
            EXPECT_GT(single.totalIdle, 0);
            EXPECT_GT(single.idleByCause[static_cast<std::size_t>(BubbleCause::Flush)], 0);
            expectSameReport(analyze(trace, options), single);

            // The first walk taken as the trace is written, in pieces of a size unrelated to
            // the resume points' stride.
            FirstPass pass(options, kLanes, trace.extent().maxMicrobatch, 1);
            const std::vector<TraceEvent> events = trace.toVector();
            for (std::size_t at = 0; at < events.size(); at += 1'000) {
                pass.add(events.data() + at, std::min<std::size_t>(1'000, events.size() - at));
            }
            expectSameReport(analyze(trace, options, &pass), single);

            // The first walk split by what it tracks, the two halves at once on two threads (the
            // simulator's: the facts beside the drive, the memory after it).
            FirstPass halves(options, kLanes, trace.extent().maxMicrobatch, 1);
            std::thread facts([&] {
                for (std::size_t at = 0; at < events.size(); at += 1'000) {
                    halves.addFacts(events.data() + at, std::min<std::size_t>(1'000, events.size() - at));
                }
            });
            halves.addMemory(events.data(), events.size());
            facts.join();
            expectSameReport(analyze(trace, options, &halves), single);
        }
    }
}

// A short trace is walked on one thread: nothing to compare beyond that the report is the same.
TEST(SplitSecondWalk, AShortTraceIsTheSameOnEitherPath)
{
    AnalysisOptions options;
    options.microbatchesPerBatch = kMicrobatchesPerBatch;
    const TraceSnapshot trace = snapshotOf(randomTrace(9, 500, -1));
    ASSERT_LT(trace.size(), 32'768u);
    expectSameReport(analyze(trace, options), analyzeOnOneThread(trace, options));
}

} // namespace
} // namespace bs::profiler
