// Issue 14, multi-process: a `launch` stopped by a signal keeps what every rank measured (one run
// directory that the reader opens, with the global batches every rank finished), and a rank that
// dies or was started with another configuration makes the others and the launcher exit within
// the timeout with one line naming it.
#include "runtime/rundir/run_dir_reader.h"

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
    const pid_t launcher = spawn(kCli + " launch --nproc-per-node 3 --grace 30 --" + kLongRun + " --stages 3 --out "
                                 + out.string() + " >" + (dir / "out").string() + " 2>" + (dir / "err").string());
    ASSERT_GT(launcher, 0);
    ASSERT_TRUE(waitForRecords(out, 3, 3)) << slurp(dir / "err");
    ::kill(launcher, sig);
    double took = 0;
    EXPECT_EQ(waitFor(launcher, std::chrono::seconds(60), &took), expectedExit) << slurp(dir / "err");
    const std::string err = slurp(dir / "err");
    EXPECT_NE(err.find("merged the"), std::string::npos) << err;

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
        if ((e.kind == bs::profiler::EventKind::Forward || e.kind == bs::profiler::EventKind::Backward) && e.stage < 3) {
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

TEST(StoppedLaunch, SigtermKeepsTheBatchesEveryRankFinished) { expectStoppedRunOpens(SIGTERM, 143); }

TEST(StoppedLaunch, SigintKeepsTheBatchesEveryRankFinished) { expectStoppedRunOpens(SIGINT, 130); }

} // namespace
