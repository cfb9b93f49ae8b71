// The Kineto importer against real torch.distributed.pipelining traces (tests/data/kineto, made by
// make_fixtures.py with PyPI's torch 2.11 on the CPU over Gloo) and a hand-made GPU/NCCL job.

#include "profiler/import/job_import.h"
#include "profiler/import/kineto_reader.h"
#include "profiler/import/measured_bubbles.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#ifndef BS_KINETO_DATA_DIR
#error "BS_KINETO_DATA_DIR must name tests/data/kineto"
#endif

namespace bs::profiler::kineto {
namespace {

const std::string kData = BS_KINETO_DATA_DIR;

std::string actionString(const RecoveredAction& a)
{
    return std::to_string(a.stage) + eventLetter(a.kind) + std::to_string(a.microbatch);
}

nlohmann::json orderLog(const std::string& job)
{
    std::ifstream in(kData + "/" + job + "/order.json");
    return nlohmann::json::parse(in);
}

class RealJob : public ::testing::TestWithParam<std::string>
{
};

// Each rank's recovered action order is exactly the order PyTorch's schedule ran (logged by the
// fixture script from the stage's own entry points), one lane per stage, every action identified.
TEST_P(RealJob, RecoversTheOrderPyTorchRan)
{
    const std::string jobName = GetParam();
    auto job = importKinetoJob({kData + "/" + jobName});
    ASSERT_TRUE(job) << job.error().describe();
    const nlohmann::json log = orderLog(jobName);
    const int world = log["world"].get<int>();
    ASSERT_EQ(static_cast<int>(job->ranks.size()), world);
    EXPECT_EQ(job->stages, log["stages"].get<int>());
    EXPECT_EQ(job->microbatches, log["microbatches"].get<int>());
    EXPECT_EQ(job->backend, "gloo");
    for (int r = 0; r < world; ++r) {
        std::vector<std::string> recovered;
        for (const auto& a : job->actions[static_cast<std::size_t>(r)]) {
            if (a.kind != EventKind::Update) {
                recovered.push_back(actionString(a));
            }
        }
        EXPECT_EQ(recovered, log["ran"][std::to_string(r)].get<std::vector<std::string>>()) << jobName << " rank " << r;
        EXPECT_EQ(job->ranks[static_cast<std::size_t>(r)].globalRank, r);
    }
    // One lane per stage: every stage has compute events, each on the rank that holds it.
    std::map<int, int> computePerStage;
    job->trace->forEach([&](const TraceEvent& e) {
        if (e.isCompute() && e.kind != EventKind::Update) {
            ++computePerStage[e.stage];
            EXPECT_GE(e.microbatch, 0);
            EXPECT_LE(e.start, e.end);
        }
    });
    ASSERT_EQ(static_cast<int>(computePerStage.size()), job->stages);
    for (const auto& [stage, count] : computePerStage) {
        EXPECT_EQ(count, 2 * job->microbatches) << "stage " << stage;
    }
    // Every activation and gradient crossing a stage boundary is matched with its receive.
    EXPECT_EQ(job->unmatchedComms, 0u);
    EXPECT_EQ(static_cast<int>(job->transfers.size()), 2 * (job->stages - 1) * job->microbatches);
    for (const Transfer& t : job->transfers) {
        EXPECT_EQ(t.dstStage, t.srcStage + (t.direction == Direction::Activation ? 1 : -1));
        EXPECT_GE(t.arrived, std::max(t.sendPosted, t.recvPosted)) << "a receive completed before both ends posted";
    }
    // Ranks share one host clock: no shift is needed, and none is invented.
    for (const auto& r : job->ranks) {
        EXPECT_EQ(r.clockShift, 0) << r.file;
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RealJob,
                         ::testing::Values("gpipe-2", "1f1b-2", "interleaved-2", "gpipe-4", "1f1b-4", "interleaved-4"));

TEST(KinetoImport, LabelSourcePerSchedule)
{
    auto gpipe = importKinetoJob({kData + "/gpipe-2"});
    auto f1b = importKinetoJob({kData + "/1f1b-2"});
    auto inter = importKinetoJob({kData + "/interleaved-2"});
    ASSERT_TRUE(gpipe && f1b && inter);
    EXPECT_EQ(gpipe->ranks[0].source, LabelSource::GPipeNames);
    EXPECT_EQ(f1b->ranks[0].source, LabelSource::Inferred);
    EXPECT_EQ(inter->ranks[0].source, LabelSource::PipelineAnnotations);
    // PyTorch's class, told from the orders and the placement (the catalogue maps it).
    EXPECT_EQ(gpipe->pytorchSchedule, "ScheduleGPipe");
    EXPECT_EQ(f1b->pytorchSchedule, "Schedule1F1B");
    EXPECT_EQ(inter->pytorchSchedule, "ScheduleInterleaved1F1B");
    EXPECT_EQ(stagesPerRankOf(*inter), 2);
    EXPECT_EQ(stagesPerRankOf(*f1b), 1);
    auto inter4 = importKinetoJob({kData + "/interleaved-4"});
    ASSERT_TRUE(inter4);
    EXPECT_EQ(inter4->pytorchSchedule, "ScheduleInterleaved1F1B");
    EXPECT_EQ(inter4->ranks[3].stages, (std::vector<int>{3, 7}));
    EXPECT_EQ(inter->ranks[1].stages, (std::vector<int>{1, 3}));
}

// One rank's trace of a two-rank job (a file copied off a cluster alone): the import works, and
// says the other rank is missing; a whole job says nothing.
TEST(KinetoImport, WarnsWhenRanksOfTheJobAreMissing)
{
    for (const std::string name : {"1f1b-2", "interleaved-4", "gpu-nccl-2"}) {
        auto whole = importKinetoJob({kData + "/" + name});
        ASSERT_TRUE(whole) << name << ": " << whole.error().describe();
        EXPECT_TRUE(whole->warnings.empty()) << name << ": " << whole->warnings.front();
    }
    auto one = importKinetoJob({kData + "/1f1b-2/rank0.json.gz"});
    ASSERT_TRUE(one) << one.error().describe();
    ASSERT_EQ(one->warnings.size(), 1u);
    EXPECT_NE(one->warnings[0].find("the job ran on 2 ranks, traces of 1 given (rank 0; "), std::string::npos)
        << one->warnings[0];
    EXPECT_NE(one->warnings[0].find("the other ranks' stages are missing"), std::string::npos) << one->warnings[0];
    auto three = importKinetoJob(
        {kData + "/1f1b-4/rank0.json.gz", kData + "/1f1b-4/rank1.json.gz", kData + "/1f1b-4/rank2.json.gz"});
    ASSERT_TRUE(three) << three.error().describe();
    ASSERT_EQ(three->warnings.size(), 1u);
    EXPECT_NE(three->warnings[0].find("4 ranks, traces of 3 given (rank 0, 1, 2; "), std::string::npos)
        << three->warnings[0];
}

TEST(KinetoReader, ReadsDistributedInfo)
{
    auto trace = readKinetoTrace(kData + "/1f1b-4/rank2.json.gz");
    ASSERT_TRUE(trace) << trace.error().describe();
    EXPECT_EQ(trace->rank, 2);
    EXPECT_EQ(trace->worldSize, 4);
    EXPECT_EQ(trace->backend, "gloo");
    ASSERT_EQ(trace->groups.size(), 1u);
    EXPECT_EQ(trace->groups[0].desc, "default_pg");
    EXPECT_EQ(trace->groups[0].ranks, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_GT(trace->events.size(), 500u);
}

// Measured per-rank bubbles add up: busy + idle = makespan, and the causes sum to the idle time.
TEST(KinetoImport, RankBubblesAddUp)
{
    for (const char* name : {"1f1b-4", "interleaved-2"}) {
        auto job = importKinetoJob({kData + "/" + name});
        ASSERT_TRUE(job);
        const JobBubbles b = measureBubbles(*job);
        for (const auto& r : b.ranks) {
            TimeNs causes = 0;
            for (TimeNs c : r.idleByCause) {
                causes += c;
            }
            EXPECT_EQ(causes, r.idle) << name;
            EXPECT_EQ(r.busy + r.idle, b.makespan) << name;
            EXPECT_GT(r.busy, 0) << name;
        }
    }
}

// Hand-made GPU traces with NCCL kernels: every wait is known exactly (make_gpu_fixture.py).
TEST(KinetoImport, GpuJobJoinsKernelsAndSplitsNcclWaits)
{
    auto job = importKinetoJob({kData + "/gpu-nccl-2"});
    ASSERT_TRUE(job) << job.error().describe();
    EXPECT_EQ(job->pipelineGroup, "pp");
    EXPECT_EQ(job->backend, "nccl");
    ASSERT_EQ(job->ranks.size(), 2u);
    EXPECT_TRUE(job->ranks[0].gpu);
    // Rank 0's actions come from CPU labels but their extents from the kernels they launched.
    std::vector<std::string> order0;
    for (const auto& a : job->actions[0]) {
        if (a.kind != EventKind::Update) {
            order0.push_back(actionString(a));
            EXPECT_TRUE(a.onGpu);
        }
    }
    EXPECT_EQ(order0, (std::vector<std::string>{"0F0", "0F1", "0B0", "0B1"}));
    const auto& f0 = job->actions[0].front();
    EXPECT_EQ(f0.end - f0.start, 100'000); // two 50 µs GEMMs
    std::vector<std::string> order1;
    for (const auto& a : job->actions[1]) {
        if (a.kind != EventKind::Update) {
            order1.push_back(actionString(a));
        }
    }
    EXPECT_EQ(order1, (std::vector<std::string>{"1F0", "1B0", "1F1", "1B1"}));
    // The all-reduce is not a pipeline transfer; the four p2p transfers are matched and split.
    ASSERT_EQ(job->transfers.size(), 4u);
    EXPECT_EQ(job->unmatchedComms, 0u);
    std::map<std::pair<int, int>, const Transfer*> byKey;
    for (const auto& t : job->transfers) {
        byKey[{static_cast<int>(t.direction), t.microbatch}] = &t;
        EXPECT_EQ(t.transferTime(), 20'000);
        EXPECT_EQ(t.bytes, 65536 * 4);
        ASSERT_GE(t.comm, 0);
        const CommInfo& nccl = job->comms.at(static_cast<std::size_t>(t.comm));
        EXPECT_EQ(nccl.processGroupDesc, "pp");
        EXPECT_EQ(nccl.dtype, "Float");
        EXPECT_EQ(nccl.inElements, 65536);
        EXPECT_TRUE(nccl.collective == "send" || nccl.collective == "recv");
        EXPECT_EQ(nccl.collective == "send" ? nccl.dstRank : nccl.srcRank, t.srcRank == 0 ? 1 : 0);
    }
    // The process group's p2p sequence number ("Seq"): the sender's, in the order it posted.
    // Rank 0 posts SEND_F0, SEND_F1, RECV_B0, RECV_B1; rank 1 RECV_F0, SEND_B0, RECV_F1, SEND_B1.
    std::map<std::pair<int, int>, std::int64_t> seq;
    for (const auto& t : job->transfers) {
        seq[{static_cast<int>(t.direction), t.microbatch}] = job->comms.at(static_cast<std::size_t>(t.comm)).seq;
    }
    EXPECT_EQ(seq.at({0, 0}), 0);
    EXPECT_EQ(seq.at({0, 1}), 1);
    EXPECT_EQ(seq.at({1, 0}), 1);
    EXPECT_EQ(seq.at({1, 1}), 3);
    EXPECT_EQ(byKey.at({0, 0})->recvWaiting(), 50'000);
    EXPECT_EQ(byKey.at({0, 1})->sendWaiting(), 220'000);
    EXPECT_EQ(byKey.at({1, 0})->recvWaiting(), 180'000);
    EXPECT_EQ(byKey.at({1, 1})->recvWaiting(), 120'000);
    // Rank 0 is idle on its compute stream from F1's end (220) to B0's start (440): 200 µs of it
    // waits for the gradient's sender, 20 µs is the transfer itself.
    const JobBubbles b = measureBubbles(*job);
    EXPECT_EQ(b.ranks[0].recvWaiting, 300'000);
    EXPECT_EQ(b.ranks[0].recvTransfer, 40'000);
}

} // namespace
} // namespace bs::profiler::kineto
