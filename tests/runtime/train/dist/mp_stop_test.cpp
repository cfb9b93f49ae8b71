// Issue 14, multi-process: a `launch` stopped by a signal keeps what every rank measured (one run
// directory that the reader opens, with the global batches every rank finished), and a rank that
// dies or was started with another configuration makes the others and the launcher exit within
// the timeout with one line naming it.
#include "runtime/plan/rundir/run_dir_reader.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
const std::string kCli = BS_CLI_PATH;

std::string slurp(const fs::path& p)
{
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::size_t lines(const fs::path& p)
{
    const std::string text = slurp(p);
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// `/bin/sh -c command` in the background (exec'd, so the pid is the command's).
pid_t spawn(const std::string& command)
{
    const std::string cmd = "exec " + command;
    pid_t pid = 0;
    const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
    if (::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) {
        return -1;
    }
    return pid;
}

/// Waits for `pid` up to `limit`; kills it after that. The exit status, or -1 when it had to be killed.
int waitFor(pid_t pid, std::chrono::seconds limit, double* took = nullptr)
{
    const auto start = Clock::now();
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 && Clock::now() - start < limit) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (took) {
        *took = std::chrono::duration<double>(Clock::now() - start).count();
    }
    if (done == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

fs::path freshDir(const std::string& name)
{
    const fs::path dir = fs::temp_directory_path() / ("bs_mp_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

/// Until every rank directory OUT/rankK has at least `records` metrics records (or 120 s).
bool waitForRecords(const fs::path& out, int ranks, std::size_t records)
{
    const auto start = Clock::now();
    while (Clock::now() - start < std::chrono::seconds(120)) {
        bool all = true;
        for (int k = 0; k < ranks; ++k) {
            all = all && lines(out / ("rank" + std::to_string(k)) / "metrics.jsonl") >= records;
        }
        if (all) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

const std::string kLongRun = " train --model tiny --schedule 1f1b --microbatches 2 --micro-batch-size 1 --steps 5000"
                             " --eval-interval 0 --threads 1 --timeout 10";

void expectStoppedRunOpens(int sig, int expectedExit)
{
    const fs::path dir = freshDir(sig == SIGTERM ? "stop_term" : "stop_int");
    const fs::path out = dir / "run";
    const pid_t launcher = spawn(kCli + " launch --json --nproc-per-node 3 --grace 30 --" + kLongRun
        + " --stages 3 --out " + out.string() + " >" + (dir / "out").string() + " 2>" + (dir / "err").string());
    ASSERT_GT(launcher, 0);
    ASSERT_TRUE(waitForRecords(out, 3, 3)) << slurp(dir / "err");
    ::kill(launcher, sig);
    double took = 0;
    EXPECT_EQ(waitFor(launcher, std::chrono::seconds(60), &took), expectedExit) << slurp(dir / "err");
    const std::string err = slurp(dir / "err");
    EXPECT_NE(err.find("merged the"), std::string::npos) << err;
    // --json prints the merged summary, as a finished run's.
    const std::string printed = slurp(dir / "out");
    EXPECT_NE(printed.find(sig == SIGTERM ? "\"stopped\": \"SIGTERM\"" : "\"stopped\": \"SIGINT\""), std::string::npos)
        << printed;

    // The run directory opens; it holds the batches every rank finished, all three stages traced.
    auto run = bs::runtime::readRunDir(out);
    ASSERT_TRUE(run) << run.error().describe();
    ASSERT_TRUE(run->summary.has_value());
    std::size_t fewest = SIZE_MAX;
    for (int k = 0; k < 3; ++k) {
        fewest = std::min(fewest, lines(out / ("rank" + std::to_string(k)) / "metrics.jsonl"));
    }
    const int steps = run->summary->at("steps").get<int>();
    EXPECT_GE(steps, 3);
    EXPECT_EQ(static_cast<std::size_t>(steps), fewest);
    EXPECT_EQ(run->metrics.size(), fewest);
    EXPECT_EQ(run->summary->at("stopped").get<std::string>(), sig == SIGTERM ? "SIGTERM" : "SIGINT");
    EXPECT_EQ(run->summary->at("losses").size(), static_cast<std::size_t>(steps));
    EXPECT_EQ(run->summary->at("per_stage").size(), 3u);
    EXPECT_FALSE(run->cutShort) << "the merged trace is a whole trace.json";
    auto trace = bs::runtime::readRunTrace(*run);
    ASSERT_TRUE(trace) << trace.error().describe();
    std::vector<int> computeActions(3, 0);
    (*trace)->forEach([&](const bs::profiler::TraceEvent& e) {
        EXPECT_LT(e.microbatch, steps * 2) << "an action of a batch some rank did not finish";
        if ((e.kind == bs::profiler::EventKind::Forward || e.kind == bs::profiler::EventKind::Backward)
            && e.stage < 3) {
            ++computeActions[e.stage];
        }
    });
    for (int k = 0; k < 3; ++k) {
        // 1F1B: a forward and a backward per micro-batch, m = 2 per batch (a batch is recorded when
        // its last backward ends: the update after it may be cut off).
        EXPECT_EQ(computeActions[static_cast<std::size_t>(k)], steps * 2 * 2) << "stage " << k;
    }
    // Each record's losses are the last stage's: finite numbers.
    for (const auto& record : run->metrics) {
        EXPECT_TRUE(record.at("train_loss").is_number()) << record.dump();
    }
    fs::remove_all(dir);
}

TEST(StoppedLaunch, SigtermKeepsTheBatchesEveryRankFinished)
{
    expectStoppedRunOpens(SIGTERM, 143);
}

TEST(StoppedLaunch, SigintKeepsTheBatchesEveryRankFinished)
{
    expectStoppedRunOpens(SIGINT, 130);
}

/// The pid of the launcher's child whose environment has RANK=`rank`, or -1.
pid_t rankPid(pid_t launcher, int rank)
{
    std::istringstream children(
        slurp("/proc/" + std::to_string(launcher) + "/task/" + std::to_string(launcher) + "/children"));
    for (pid_t pid = 0; children >> pid;) {
        const std::string env = slurp("/proc/" + std::to_string(pid) + "/environ");
        if (env.find(std::string("RANK=") + std::to_string(rank) + '\0') != std::string::npos
            && (env.rfind(std::string("RANK=") + std::to_string(rank), 0) == 0
                || env.find(std::string("\0RANK=") + std::to_string(rank) + '\0') != std::string::npos)) {
            return pid;
        }
    }
    return -1;
}

// Four ranks; rank 2 is killed outright mid-run. The survivors exit within their --timeout (5 s)
// with one line naming rank 2 as the one that died (rank 3 never talks to rank 2's killer, and
// rank 0 only to rank 1: they learn it from the failure report), and the launcher says which
// rank was killed, by what, and keeps the batches every rank finished.
TEST(FailedLaunch, AKilledRankIsNamedByEverySurvivorAndTheLauncher)
{
    const fs::path dir = freshDir("kill4");
    const fs::path out = dir / "run";
    const pid_t launcher = spawn(kCli
        + " launch --nproc-per-node 4 --grace 30 -- train --model tiny --schedule 1f1b"
          " --stages 4 --microbatches 4 --micro-batch-size 1 --steps 5000 --eval-interval 0"
          " --threads 1 --timeout 5 --out "
        + out.string() + " >" + (dir / "out").string() + " 2>" + (dir / "err").string());
    ASSERT_GT(launcher, 0);
    ASSERT_TRUE(waitForRecords(out, 4, 2)) << slurp(dir / "err");
    const pid_t victim = rankPid(launcher, 2);
    ASSERT_GT(victim, 0) << "rank 2's process not found";
    ::kill(victim, SIGKILL);
    double took = 0;
    const int code = waitFor(launcher, std::chrono::seconds(60), &took);
    const std::string err = slurp(dir / "err");
    EXPECT_NE(code, -1) << "the launcher did not exit within 60 s: " << err;
    EXPECT_EQ(code, 1) << "a rank failed while running (killed: 137) makes the launch exit 1: " << err;
    EXPECT_LT(took, 20.0) << "the survivors' timeout is 5 s: " << err;
    EXPECT_NE(err.find("[launch] rank 2 was killed by SIGKILL (signal 9) first"), std::string::npos) << err;
    EXPECT_NE(err.find("[launch] the run failed: rank 2 was killed by SIGKILL"), std::string::npos) << err;
    // Each survivor's error is one line, and the first rank it names is rank 2.
    for (int k : {0, 1, 3}) {
        const std::string prefix = "[rank " + std::to_string(k) + "] rank " + std::to_string(k) + ": error: ";
        const std::size_t at = err.find(prefix);
        ASSERT_NE(at, std::string::npos) << "no error line of rank " << k << ":\n" << err;
        const std::string line = err.substr(at + prefix.size(), err.find('\n', at) - at - prefix.size());
        const std::size_t named = line.find("rank ");
        ASSERT_NE(named, std::string::npos) << line;
        EXPECT_EQ(line.substr(named, 6), "rank 2") << "rank " << k << " blames another rank: " << line;
        std::printf("rank %d: %s\n", k, line.c_str());
    }
    auto run = bs::runtime::readRunDir(out);
    ASSERT_TRUE(run) << run.error().describe();
    ASSERT_TRUE(run->summary.has_value());
    EXPECT_NE(run->summary->at("error").get<std::string>().find("rank 2 was killed"), std::string::npos);
    EXPECT_GE(run->summary->at("steps").get<int>(), 2);
    fs::remove_all(dir);
}

struct RankRun
{
    int code = -1;
    double took = 0;
    std::string err;
};

/// Starts one process per entry of `ranks` (RANK = index; each entry: "WORLD_SIZE train args"),
/// torchrun-style on 127.0.0.1 (a TCPStore hosted by rank 0), and waits for all of them.
std::vector<RankRun> runRanks(const std::string& name, const std::vector<std::pair<int, std::string>>& ranks)
{
    const fs::path dir = freshDir(name);
    const int port = 20000 + static_cast<int>((::getpid() * 7 + static_cast<int>(name.size()) * 131) % 9000);
    std::vector<pid_t> pids;
    for (std::size_t k = 0; k < ranks.size(); ++k) {
        pids.push_back(spawn("env RANK=" + std::to_string(k) + " WORLD_SIZE=" + std::to_string(ranks[k].first)
            + " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " " + kCli + " train" + ranks[k].second
            + " --distributed --timeout 5 2>" + (dir / ("err" + std::to_string(k))).string() + " >/dev/null"));
    }
    std::vector<RankRun> out(ranks.size());
    for (std::size_t k = 0; k < ranks.size(); ++k) {
        out[k].code = waitFor(pids[k], std::chrono::seconds(60), &out[k].took);
        out[k].err = slurp(dir / ("err" + std::to_string(k)));
    }
    fs::remove_all(dir);
    return out;
}

const std::string kShortRun =
    " --model tiny --schedule 1f1b --micro-batch-size 1 --steps 3 --eval-interval 0 --threads 1";

// Ranks started with different configurations (here: micro-batches) used to exchange tensors of the
// wrong count until a Gloo timeout; now both sides say, in one line, which rank differs and how.
TEST(MismatchedRanks, OtherSettingsAreNamedOnBothSides)
{
    const auto r = runRanks("mismatch_m",
        {{2, kShortRun + " --stages 2 --microbatches 4"}, {2, kShortRun + " --stages 2 --microbatches 2"}});
    EXPECT_EQ(r[0].code, 2) << r[0].err;
    EXPECT_EQ(r[1].code, 2) << r[1].err;
    EXPECT_NE(r[0].err.find(
                  "rank 1 was started with other settings than rank 0: pipeline.microbatches = 4 here, 2 on rank 1"),
        std::string::npos)
        << r[0].err;
    EXPECT_NE(r[1].err.find(
                  "rank 1 was started with other settings than rank 0: pipeline.microbatches = 2 here, 4 on rank 0"),
        std::string::npos)
        << r[1].err;
    for (const RankRun& rank : r) {
        EXPECT_LT(rank.took, 15.0) << rank.err;
        // One error line (the product's "  at: context" line may follow), no Gloo noise.
        EXPECT_EQ(rank.err.find("error: "), rank.err.rfind("error: ")) << rank.err;
        EXPECT_LE(std::count(rank.err.begin(), rank.err.end(), '\n'), 2) << rank.err;
    }
}

TEST(MismatchedRanks, AnotherWorldSizeIsNamed)
{
    const auto r = runRanks("mismatch_w",
        {{2, kShortRun + " --stages 2 --microbatches 2"}, {3, kShortRun + " --stages 3 --microbatches 2"}});
    EXPECT_EQ(r[0].code, 2) << r[0].err;
    EXPECT_EQ(r[1].code, 2) << r[1].err;
    EXPECT_NE(r[0].err.find("rank 1 was started with other settings than rank 0: WORLD_SIZE = 2 here, 3 on rank 1"),
        std::string::npos)
        << r[0].err;
    EXPECT_NE(r[1].err.find("WORLD_SIZE = 3 here, 2 on rank 0"), std::string::npos) << r[1].err;
}

// A rank that never starts: rank 0 names it once --timeout has passed, instead of waiting 120 s.
TEST(MismatchedRanks, ARankThatNeverJoinsIsNamedWithinTheTimeout)
{
    const auto r = runRanks("never_joins", {{2, kShortRun + " --stages 2 --microbatches 2"}});
    EXPECT_NE(r[0].code, 0) << r[0].err;
    EXPECT_NE(r[0].code, -1) << "still waiting after 60 s";
    EXPECT_LT(r[0].took, 15.0);
    EXPECT_NE(r[0].err.find("rank 1 did not join the rendezvous within 5"), std::string::npos) << r[0].err;
}

} // namespace
