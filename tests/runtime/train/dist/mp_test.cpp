// Multi-process training through the real executable: `launch` starts the ranks, they rendezvous
// over c10d (TCPStore + Gloo on 127.0.0.1) and train one stage each. Losses equal the serial run;
// a killed rank makes the others exit within their --timeout naming it; a bad environment fails
// before any work with exit code 2.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
const std::string kCli = BS_CLI_PATH;

struct Proc
{
    int exitCode = -1;
    std::string out; // stdout (stderr goes to err)
    std::string err;
};

std::string slurp(const std::filesystem::path& p)
{
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

Proc shell(const std::string& command)
{
    const auto dir = std::filesystem::temp_directory_path();
    const auto tag = std::to_string(::getpid()) + "_" + std::to_string(Clock::now().time_since_epoch().count());
    const auto out = dir / ("bs_mp_out_" + tag), err = dir / ("bs_mp_err_" + tag);
    const int status = std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
    Proc r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
}

std::string trainArgs(const std::string& schedule, int stages)
{
    return " train --model tiny --schedule " + schedule + " --stages " + std::to_string(stages)
        + " --microbatches 4 --micro-batch-size 1 --steps 2 --eval-interval 0 --threads 1 --seed 7";
}

std::vector<double> losses(const std::string& json)
{
    const nlohmann::json j = nlohmann::json::parse(json);
    return j.at("losses").get<std::vector<double>>();
}

class MultiProcessMatchesSerial : public ::testing::TestWithParam<std::tuple<std::string, int>>
{};

TEST_P(MultiProcessMatchesSerial, LossesAreIdentical)
{
    const auto& [schedule, ranks] = GetParam();
    const Proc serial = shell(kCli + trainArgs(schedule, ranks) + " --json");
    ASSERT_EQ(serial.exitCode, 0) << serial.err;
    const auto dir = std::filesystem::temp_directory_path()
        / ("bs_mp_run_" + schedule + std::to_string(ranks) + "_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    const Proc mp = shell(kCli + " launch --json --nproc-per-node " + std::to_string(ranks) + " --"
        + trainArgs(schedule, ranks) + " --timeout 20 --out " + dir.string());
    ASSERT_EQ(mp.exitCode, 0) << mp.err << mp.out;
    const std::vector<double> expected = losses(serial.out);
    ASSERT_EQ(expected.size(), 2u);
    EXPECT_EQ(losses(mp.out), expected) << mp.out;
    // The run directory: merged trace with one lane per stage, per-rank metrics.
    const nlohmann::json merged = nlohmann::json::parse(mp.out);
    EXPECT_EQ(merged.at("per_stage").size(), static_cast<std::size_t>(ranks));
    EXPECT_TRUE(std::filesystem::exists(dir / "trace.json"));
    EXPECT_TRUE(std::filesystem::exists(dir / "summary.json"));
    for (int k = 0; k < ranks; ++k) {
        EXPECT_TRUE(std::filesystem::exists(dir / ("rank" + std::to_string(k)) / "metrics.jsonl")) << k;
    }
    const nlohmann::json trace = nlohmann::json::parse(slurp(dir / "trace.json"));
    std::set<int> lanes;
    for (const nlohmann::json& e : trace.at("traceEvents")) {
        if (e.value("ph", "") == "X") {
            lanes.insert(e.at("pid").get<int>()); // the writer puts each stage in its own process lane
        }
    }
    EXPECT_EQ(static_cast<int>(lanes.size()), ranks) << "one lane per stage";
    std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Ranks, MultiProcessMatchesSerial,
    ::testing::Values(std::tuple{"1f1b", 2}, std::tuple{"paci", 2}, std::tuple{"1f1b", 4}, std::tuple{"paci", 4}),
    [](const auto& param) {
        return std::get<0>(param.param) + "_" + std::to_string(std::get<1>(param.param)) + "ranks";
    });

// Interleaved and V placements over 2 Gloo ranks, each process holding v = 2 model chunks: the
// same losses as the serial executor and as plain training (--reference), per_stage for all p · v
// stages, and one timeline lane per rank.
class MultiStageRanks : public ::testing::TestWithParam<std::string>
{};

TEST_P(MultiStageRanks, LossesEqualSerialAndTheReference)
{
    const std::string schedule = GetParam();
    const std::string args = trainArgs(schedule, 2) + " --stages-per-rank 2";
    const Proc serial = shell(kCli + args + " --json");
    ASSERT_EQ(serial.exitCode, 0) << serial.err;
    const Proc reference = shell(kCli + args + " --reference --json");
    ASSERT_EQ(reference.exitCode, 0) << reference.err;
    const auto dir = std::filesystem::temp_directory_path() / ("bs_mp_multistage_" + schedule);
    std::filesystem::remove_all(dir);
    const Proc mp = shell(kCli + " launch --json --nproc-per-node 2 --" + args + " --timeout 20 --out " + dir.string());
    ASSERT_EQ(mp.exitCode, 0) << mp.err << mp.out;
    const std::vector<double> expected = losses(serial.out);
    ASSERT_EQ(expected.size(), 2u);
    EXPECT_EQ(losses(mp.out), expected) << mp.out;
    const std::vector<double> plain = losses(reference.out);
    ASSERT_EQ(plain.size(), expected.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
        EXPECT_LE(std::abs(expected[i] - plain[i]) / std::abs(plain[i]), 1e-5) << schedule << " step " << i;
    }
    const nlohmann::json merged = nlohmann::json::parse(mp.out);
    EXPECT_EQ(merged.at("per_stage").size(), 4u) << "p · v model stages";
    const nlohmann::json trace = nlohmann::json::parse(slurp(dir / "trace.json"));
    std::set<int> lanes;
    for (const nlohmann::json& e : trace.at("traceEvents")) {
        if (e.value("ph", "") == "X") {
            lanes.insert(e.at("pid").get<int>());
        }
    }
    EXPECT_EQ(lanes.size(), 2u) << "one lane per rank";
    std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, MultiStageRanks, ::testing::Values("interleaved-1f1b", "dualpipev"), [](const auto& param) {
        std::string n = param.param;
        std::replace(n.begin(), n.end(), '-', '_');
        return n;
    });

// `train --executor threaded` (one process, one thread per stage) prints the same losses as serial.
TEST(ThreadedCli, ExecutorThreadedMatchesSerial)
{
    const Proc serial = shell(kCli + trainArgs("paci", 3) + " --json");
    const Proc threaded = shell(kCli + trainArgs("paci", 3) + " --executor threaded --json");
    ASSERT_EQ(serial.exitCode, 0) << serial.err;
    ASSERT_EQ(threaded.exitCode, 0) << threaded.err;
    EXPECT_EQ(losses(threaded.out), losses(serial.out));
    const Proc bad = shell(kCli + trainArgs("paci", 3) + " --executor parallel");
    EXPECT_EQ(bad.exitCode, 2) << bad.err;
}

TEST(MultiProcess, BadEnvironmentFailsBeforeAnyWork)
{
    const std::string args = " train --model tiny --stages 2 --steps 1 --distributed";
    const Proc noAddr = shell("env -u MASTER_ADDR RANK=0 WORLD_SIZE=2 MASTER_PORT=29999 " + kCli + args);
    EXPECT_EQ(noAddr.exitCode, 2) << noAddr.err;
    EXPECT_NE(noAddr.err.find("MASTER_ADDR"), std::string::npos) << noAddr.err;
    const Proc wrongSize = shell("env RANK=0 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=29999 " + kCli + args);
    EXPECT_EQ(wrongSize.exitCode, 2) << wrongSize.err;
    EXPECT_NE(wrongSize.err.find("WORLD_SIZE is 3"), std::string::npos) << wrongSize.err;
    // launch returns the ranks' exit code.
    const Proc launched = shell(kCli + " launch --nproc-per-node 3 --" + " train --model tiny --stages 2 --steps 1");
    EXPECT_EQ(launched.exitCode, 2) << launched.err;
    EXPECT_NE(launched.err.find("[rank 1]"), std::string::npos) << launched.err;
}

// Three ranks on a long run; rank 1 is killed (SIGKILL) mid-run: ranks 0 and 2 must exit non-zero
// within the timeout, and their message names rank 1.
TEST(MultiProcess, AKilledRankMakesTheOthersExitNamingIt)
{
    const int port = 29000 + static_cast<int>(::getpid() % 900);
    const auto dir = std::filesystem::temp_directory_path() / ("bs_mp_kill_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::vector<pid_t> pids;
    for (int k = 0; k < 3; ++k) {
        const std::string cmd = "exec env RANK=" + std::to_string(k) + " WORLD_SIZE=3 LOCAL_RANK=" + std::to_string(k)
            + " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " " + kCli
            + " train --model tiny --schedule 1f1b --stages 3 --microbatches 4 --micro-batch-size 1"
              " --steps 300 --eval-interval 0 --threads 1 --distributed --timeout 5 --out "
            + dir.string() + " 2>" + (dir / ("err" + std::to_string(k))).string();
        pid_t pid = 0;
        const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
        ASSERT_EQ(::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
        pids.push_back(pid);
    }
    // Wait until every rank has recorded a batch: rendezvous done, training under way.
    const auto started = Clock::now();
    auto trained = [&](int k) { return !slurp(dir / ("rank" + std::to_string(k)) / "metrics.jsonl").empty(); };
    while (!(trained(0) && trained(1) && trained(2)) && Clock::now() - started < std::chrono::seconds(120)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pids[0], &status, WNOHANG), 0) << "rank 0 ended early: " << slurp(dir / "err0");
    // With LibTorch 1.13 the ranks meet through a FileStore in a directory rank 0 made; each holds
    // its `lock` file open while it runs. The survivors must remove it although rank 1 never leaves.
    std::filesystem::path rendezvous;
    for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pids[0]) + "/fd")) {
        std::error_code error;
        const auto target = std::filesystem::read_symlink(fd.path(), error);
        if (!error && target.filename() == "lock"
            && target.parent_path().filename().string().rfind("bubblescope-rendezvous-", 0) == 0) {
            rendezvous = target.parent_path();
        }
    }
    ::kill(pids[1], SIGKILL);
    const auto killedAt = Clock::now();
    ::waitpid(pids[1], &status, 0);
    for (int k : {0, 2}) {
        pid_t done = 0;
        while ((done = ::waitpid(pids[static_cast<std::size_t>(k)], &status, WNOHANG)) == 0
            && Clock::now() - killedAt < std::chrono::seconds(20)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (done == 0) {
            ::kill(pids[static_cast<std::size_t>(k)], SIGKILL);
            ::waitpid(pids[static_cast<std::size_t>(k)], &status, 0);
            ADD_FAILURE() << "rank " << k << " still running 20 s after rank 1 died";
            continue;
        }
        EXPECT_LT(Clock::now() - killedAt, std::chrono::seconds(15)) << "rank " << k << " (timeout 5 s)";
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << "rank " << k;
        const std::string err = slurp(dir / ("err" + std::to_string(k)));
        EXPECT_NE(err.find("rank 1"), std::string::npos) << "rank " << k << " says: " << err;
        std::printf("rank %d exited %.1f s after rank 1 was killed: %s", k,
            std::chrono::duration<double>(Clock::now() - killedAt).count(), err.c_str());
    }
#ifdef BS_FILE_RENDEZVOUS // (LibTorch 2.x: a TCPStore bound to MASTER_ADDR, no directory)
    ASSERT_FALSE(rendezvous.empty()) << "rank 0 holds no bubblescope-rendezvous-*/lock open";
    EXPECT_FALSE(std::filesystem::exists(rendezvous)) << rendezvous << " left behind by the survivors";
#endif
    std::filesystem::remove_all(dir);
}

} // namespace
