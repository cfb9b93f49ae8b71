// The Perfetto export of an imported job's attribution (`analyze --perfetto`): read back as JSON,
// its slices are the recovered actions, the measured bubbles by cause, and each send/receive split
// into waiting and transfer, with one flow arrow per matched transfer.

#include "profiler/import/attribution_export.h"
#include "profiler/import/job_import.h"
#include "profiler/import/measured_bubbles.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace bs::profiler::kineto {
namespace {

const std::string kData = BS_KINETO_DATA_DIR;

struct Exported
{
    nlohmann::json doc;
    std::map<std::pair<int, int>, std::vector<nlohmann::json>> slices; ///< (pid, tid) -> X events and async pairs
    std::map<std::pair<int, int>, std::vector<nlohmann::json>> complete; ///< (pid, tid) -> X events only
    std::vector<nlohmann::json> flows;
};

Exported exportJob(const ImportedJob& job, const JobBubbles& bubbles)
{
    std::stringstream out;
    const Status written = writeAttributionTrace(out, job, bubbles);
    EXPECT_TRUE(written);
    Exported e;
    e.doc = nlohmann::json::parse(out.str()); // throws (fails the test) when it is not JSON
    std::map<std::pair<std::string, int>, nlohmann::json> open; // async slices by (cat, id)
    for (const auto& ev : e.doc.at("traceEvents")) {
        const std::string ph = ev.at("ph");
        EXPECT_TRUE(ev.contains("cat") && ev.at("cat").is_string()) << ev.dump(); // HTA needs it
        const std::pair<int, int> track{ev.at("pid").get<int>(), ev.at("tid").get<int>()};
        if (ph == "X") {
            e.slices[track].push_back(ev);
            e.complete[track].push_back(ev);
        } else if (ph == "b") {
            EXPECT_TRUE(open.emplace(std::pair{ev.at("cat").get<std::string>(), ev.at("id").get<int>()}, ev).second)
                << "async id used twice: " << ev.dump();
        } else if (ph == "e") {
            auto it = open.find({ev.at("cat").get<std::string>(), ev.at("id").get<int>()});
            EXPECT_NE(it, open.end()) << "an end without a begin: " << ev.dump();
            if (it != open.end()) {
                nlohmann::json slice = it->second;
                slice["dur"] = ev.at("ts").get<double>() - slice.at("ts").get<double>();
                EXPECT_GE(slice["dur"].get<double>(), 0.0);
                e.slices[track].push_back(slice);
                open.erase(it);
            }
        } else if (ph == "s" || ph == "f") {
            e.flows.push_back(ev);
        }
    }
    EXPECT_TRUE(open.empty()) << open.size() << " async slices never end";
    return e;
}

/// ns from the export's µs with 3 decimals (exact).
TimeNs ns(const nlohmann::json& us)
{
    return std::llround(us.get<double>() * 1000.0);
}

constexpr int kCompute = 0, kBubbles = 1, kRecv = 2, kSend = 3;

// The hand-made NCCL job, whose every wait is known (make_gpu_fixture.py).
TEST(KinetoExport, SlicesAreTheActionsBubblesWaitsAndTransfers)
{
    auto job = importKinetoJob({kData + "/gpu-nccl-2"});
    ASSERT_TRUE(job) << job.error().describe();
    const JobBubbles bubbles = measureBubbles(*job);
    const Exported e = exportJob(*job, bubbles);
    EXPECT_EQ(e.doc.at("otherData").at("schedule"), "Schedule1F1B");
    for (int r = 0; r < 2; ++r) {
        // compute: one slice per recovered action, named like PyTorch's actions, at its extent.
        const auto& compute = e.slices.at({r, kCompute});
        ASSERT_EQ(compute.size(), job->actions[static_cast<std::size_t>(r)].size());
        for (std::size_t i = 0; i < compute.size(); ++i) {
            const RecoveredAction& a = job->actions[static_cast<std::size_t>(r)][i];
            EXPECT_EQ(ns(compute[i].at("ts")), a.start);
            EXPECT_EQ(ns(compute[i].at("dur")), a.end - a.start);
            if (a.kind != EventKind::Update) {
                EXPECT_EQ(compute[i].at("name"),
                    std::to_string(a.stage) + eventLetter(a.kind) + std::to_string(a.microbatch));
            }
        }
        // bubbles: named by cause, adding up to the rank's measured idle per cause.
        std::map<std::string, TimeNs> byCause;
        for (const auto& b : e.slices.at({r, kBubbles})) {
            byCause[b.at("name").get<std::string>()] += ns(b.at("dur"));
        }
        const RankBubbles& rb = bubbles.ranks[static_cast<std::size_t>(r)];
        for (int c = 0; c < kBubbleCauseCount; ++c) {
            const std::string cause(bubbleCauseName(static_cast<BubbleCause>(c)));
            EXPECT_EQ(byCause[cause], rb.idleByCause[static_cast<std::size_t>(c)]) << "rank " << r << " " << cause;
        }
    }
    // Waits and transfers, as the fixture timed them (µs).
    std::map<std::string, TimeNs> recv0, send0, recv1;
    for (const auto& s : e.slices.at({0, kRecv})) {
        recv0[s.at("name")] = std::llround(s.at("dur").get<double>() * 1000.0);
    }
    for (const auto& s : e.slices.at({0, kSend})) {
        send0[s.at("name")] = std::llround(s.at("dur").get<double>() * 1000.0);
    }
    for (const auto& s : e.slices.at({1, kRecv})) {
        recv1[s.at("name")] = std::llround(s.at("dur").get<double>() * 1000.0);
    }
    EXPECT_EQ(recv1.at("wait for sender: activation 0"), 50'000);
    EXPECT_EQ(recv1.at("transfer: activation 0"), 20'000);
    EXPECT_EQ(send0.at("wait for receiver: activation 1"), 220'000);
    EXPECT_EQ(send0.at("send: activation 1"), 20'000);
    EXPECT_EQ(recv0.at("wait for sender: gradient 0"), 180'000);
    EXPECT_EQ(recv0.at("wait for sender: gradient 1"), 120'000);
    EXPECT_EQ(recv0.at("transfer: gradient 1"), 20'000);
    // One arrow per transfer, from the sender's send lane to the receiver's recv lane.
    ASSERT_EQ(e.flows.size(), 2 * job->transfers.size());
    std::map<int, std::pair<int, int>> ends; // id -> (start pid, finish pid)
    for (const auto& f : e.flows) {
        auto& [from, to] = ends[f.at("id").get<int>()];
        (f.at("ph") == "s" ? from : to) = f.at("pid").get<int>() * 10 + f.at("tid").get<int>();
    }
    ASSERT_EQ(ends.size(), job->transfers.size());
    for (const auto& [id, pair] : ends) {
        EXPECT_EQ(pair.first % 10, kSend) << id;
        EXPECT_EQ(pair.second % 10, kRecv) << id;
        EXPECT_NE(pair.first / 10, pair.second / 10) << "a transfer between two ranks";
    }
}

// A real job: every rank's bubble slices add up to its measured idle.
TEST(KinetoExport, RealInterleavedJobBubblesAddUpPerRank)
{
    auto job = importKinetoJob({kData + "/interleaved-2"});
    ASSERT_TRUE(job) << job.error().describe();
    const JobBubbles bubbles = measureBubbles(*job);
    const Exported e = exportJob(*job, bubbles);
    for (const RankBubbles& rb : bubbles.ranks) {
        TimeNs idle = 0;
        for (const auto& b : e.slices.at({rb.rank, kBubbles})) {
            idle += ns(b.at("dur"));
        }
        EXPECT_EQ(idle, rb.idle) << "rank " << rb.rank;
    }
}

// Issue 32: the Trace Event format's nesting rule: two complete slices on one thread either nest or
// do not touch. Sends and receives broke it (3-64 and 0-81 partial overlaps per file); they are
// async slices now, each on its own track.
TEST(KinetoExport, CompleteSlicesOnEachThreadNest)
{
    for (const char* dir : {"gpu-nccl-2", "interleaved-2", "1f1b-2"}) {
        auto job = importKinetoJob({kData + "/" + dir});
        ASSERT_TRUE(job) << dir << ": " << job.error().describe();
        const Exported e = exportJob(*job, measureBubbles(*job));
        int partial = 0;
        for (const auto& [track, events] : e.complete) {
            std::vector<std::pair<TimeNs, TimeNs>> spans;
            for (const auto& ev : events) {
                spans.emplace_back(ns(ev.at("ts")), ns(ev.at("ts")) + ns(ev.at("dur")));
            }
            std::sort(spans.begin(), spans.end());
            for (std::size_t i = 0; i < spans.size(); ++i) {
                for (std::size_t j = i + 1; j < spans.size() && spans[j].first < spans[i].second; ++j) {
                    partial += spans[j].second > spans[i].second ? 1 : 0; // starts inside, ends outside
                }
            }
        }
        EXPECT_EQ(partial, 0) << dir;
    }
}

} // namespace
} // namespace bs::profiler::kineto
