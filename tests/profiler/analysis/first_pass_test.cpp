// analyze()'s first walk taken as a trace is written (FirstPass, which the simulator runs on a
// second thread behind the scheduler core): the same report as analyze() walking the trace itself,
// and a pass that does not match the trace is not used.

#include "profiler/analysis/first_pass.h"

#include "profiler/analysis/analyze.h"
#include "profiler/analysis/report_json.h"
#include "tests/support/same_report.h"
#include "tests/support/trace_events.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace bs::profiler {
namespace {

using test::expectSameReport;

// A compute event of `chunk` on its rank.
TraceEvent ev(int stage, EventKind kind, int mb, TimeNs start, TimeNs end, int chunk = 0)
{
    return test::ev(stage, kind, mb, start, end, 0, chunk);
}
using test::send;

// Two ranks of two chunks, two batches that flush, transfers between the ranks each way: every
// fact the first walk gathers (span, flush windows, drain, lead lane, transfers) is in play.
std::vector<TraceEvent> twoBatchesOnTwoRanksOfTwoChunks()
{
    std::vector<TraceEvent> events;
    for (int batch = 0; batch < 2; ++batch) {
        const TimeNs t = batch * 200;
        const int mb = 2 * batch;
        events.push_back(ev(0, EventKind::Forward, mb, t, t + 10, 0));
        events.push_back(send(0, 1, mb, t + 10, t + 15));
        events.push_back(ev(0, EventKind::Forward, mb + 1, t + 10, t + 20, 0));
        events.push_back(send(0, 1, mb + 1, t + 20, t + 25));
        events.push_back(ev(1, EventKind::Forward, mb, t + 15, t + 25, 0));
        events.push_back(send(1, 0, mb, t + 25, t + 32));
        events.push_back(ev(1, EventKind::Forward, mb + 1, t + 25, t + 35, 0));
        events.push_back(ev(0, EventKind::Forward, mb, t + 32, t + 42, 1));
        events.push_back(ev(0, EventKind::Backward, mb, t + 42, t + 62, 1));
        events.push_back(send(0, 1, mb, t + 62, t + 70));
        events.push_back(ev(1, EventKind::Backward, mb, t + 70, t + 90, 0));
        events.push_back(ev(1, EventKind::Backward, mb + 1, t + 90, t + 110, 0));
        events.push_back(send(1, 0, mb, t + 110, t + 118));
        events.push_back(ev(0, EventKind::Backward, mb, t + 118, t + 138, 0));
    }
    return events;
}

TraceMeta twoChunkMeta()
{
    TraceMeta meta;
    meta.stages = 2;
    meta.stagesPerLane = 2;
    return meta;
}

AnalysisOptions flushingBatchesOfTwo()
{
    AnalysisOptions options;
    options.microbatchesPerBatch = 2;
    return options;
}

TEST(FirstPass, FedInPiecesAsWrittenGivesTheReportOfOneWalk)
{
    const auto events = twoBatchesOnTwoRanksOfTwoChunks();
    const auto trace = makeSnapshot(twoChunkMeta(), events);
    const AnalysisOptions options = flushingBatchesOfTwo();
    const Report walked = analyze(*trace, options);
    ASSERT_GT(walked.idleByCause[static_cast<std::size_t>(BubbleCause::Flush)], 0); // the facts matter
    ASSERT_GT(walked.idleByCause[static_cast<std::size_t>(BubbleCause::Comm)], 0);
    for (std::size_t piece : {std::size_t{1}, std::size_t{3}, events.size()}) {
        FirstPass pass(options, 2, 3, 2);
        for (std::size_t at = 0; at < events.size(); at += piece) {
            pass.add(events.data() + at, std::min(piece, events.size() - at));
        }
        EXPECT_EQ(pass.eventsSeen(), events.size());
        expectSameReport(analyze(*trace, options, &pass), walked);
    }
}

TEST(FirstPass, AMatchingPassIsWhatTheReportIsBuiltFrom)
{
    // A pass over other events of the same shape (every event 1000 earlier) is used as it is: the
    // start it measured shows in the report. (So the tests above compare a pass that was used.)
    auto events = twoBatchesOnTwoRanksOfTwoChunks();
    const auto trace = makeSnapshot(twoChunkMeta(), events);
    for (auto& e : events) {
        e.start -= 1000;
        e.end -= 1000;
    }
    FirstPass pass(flushingBatchesOfTwo(), 2, 3, 2);
    pass.add(events.data(), events.size());
    const Report report = analyze(*trace, flushingBatchesOfTwo(), &pass);
    const Report walked = analyze(*trace, flushingBatchesOfTwo());
    EXPECT_EQ(walked.perStage[0].idleByCause[static_cast<std::size_t>(BubbleCause::WarmUp)], 0);
    EXPECT_EQ(report.perStage[0].idleByCause[static_cast<std::size_t>(BubbleCause::WarmUp)], 1000);
}

TEST(FirstPass, OneThatDoesNotMatchTheTraceIsWalkedAgain)
{
    const auto events = twoBatchesOnTwoRanksOfTwoChunks();
    const auto trace = makeSnapshot(twoChunkMeta(), events);
    const AnalysisOptions options = flushingBatchesOfTwo();
    const Report walked = analyze(*trace, options);
    const auto fed = [&](FirstPass pass, std::size_t count) {
        pass.add(events.data(), count);
        return pass;
    };
    // Part of the trace; too few lanes; micro-batch ids it has no room for; other stages per
    // lane; other options (each would give a wrong report if used).
    FirstPass partial = fed(FirstPass(options, 2, 3, 2), events.size() - 1);
    FirstPass oneLane = fed(FirstPass(options, 1, 3, 2), events.size());
    FirstPass fewMicrobatches = fed(FirstPass(options, 2, 1, 2), events.size());
    FirstPass oneChunk = fed(FirstPass(options, 2, 3, 1), events.size());
    AnalysisOptions async = options;
    async.synchronous = false;
    FirstPass otherOptions = fed(FirstPass(async, 2, 3, 2), events.size());
    // The first walk tracks memory and lag too: options that change those figures do not match.
    AnalysisOptions bigActivations = options;
    bigActivations.activationBytes = {1000, 1000};
    ASSERT_NE(analyze(*trace, bigActivations).perStage[0].peakMemoryBytes, walked.perStage[0].peakMemoryBytes);
    FirstPass otherActivations = fed(FirstPass(bigActivations, 2, 3, 2), events.size());
    AnalysisOptions stashing = options;
    stashing.stashesWeights = true;
    stashing.paramBytes = {10, 10};
    FirstPass otherWeights = fed(FirstPass(stashing, 2, 3, 2), events.size());
    for (FirstPass* pass :
        {&partial, &oneLane, &fewMicrobatches, &oneChunk, &otherOptions, &otherActivations, &otherWeights}) {
        expectSameReport(analyze(*trace, options, pass), walked);
    }
    expectSameReport(analyze(*trace, options, nullptr), walked);
}

} // namespace
} // namespace bs::profiler
