#include "app/cli/launch_command.h"

#include "app/cli/cli_common.h"
#include "app/cli/option_checks.h"
#include "app/cli/stop_signals.h"
#include "runtime/train/dist/listen_socket.h"
#include "runtime/train/dist/rank_merge.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

namespace bs::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Rank
{
    pid_t pid = -1;
    int out = -1; // stdout pipe
    int err = -1; // stderr pipe
    std::string outBuf, errBuf, captured;
    std::optional<int> exitCode;
};

// Writes the complete lines of `buf` with the rank prefix; keeps the tail.
void flushLines(std::string& buf, int rank, FILE* to, bool all)
{
    std::size_t start = 0;
    for (std::size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::fprintf(to, "[rank %d] %.*s\n", rank, static_cast<int>(nl - start), buf.data() + start);
    }
    buf.erase(0, start);
    if (all && !buf.empty()) {
        std::fprintf(to, "[rank %d] %s\n", rank, buf.c_str());
        buf.clear();
    }
    std::fflush(to);
}

/// The value of `--name VALUE` or `--name=VALUE` in the ranks' command, if given.
std::optional<std::string> optionValue(const std::vector<std::string>& command, const std::string& name)
{
    for (std::size_t i = 0; i < command.size(); ++i) {
        if (command[i] == name && i + 1 < command.size()) {
            return command[i + 1];
        }
        if (command[i].rfind(name + "=", 0) == 0) {
            return command[i].substr(name.size() + 1);
        }
    }
    return std::nullopt;
}

const char* signalName(int sig)
{
    switch (sig) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGKILL:
        return "SIGKILL";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGABRT:
        return "SIGABRT";
    case SIGBUS:
        return "SIGBUS";
    default:
        return "a signal";
    }
}

/// After a stop (or a failure) that left the ranks' own directories only: one run directory of
/// the global batches every rank finished (rank_merge.h). Says what it kept; never fails the launch
/// beyond its exit code.
void mergeWhatRanksKept(
    const LaunchArgs& args, const std::vector<pid_t>& pids, const std::string& stoppedBy, const std::string& error)
{
    // --json: the merged summary is printed as rank 0's would have been.
    const std::optional<std::string> out = optionValue(args.command, "--out");
    if (!out || out->empty()) {
        return; // nothing was written
    }
    bool overwrite = false;
    for (const std::string& a : args.command) {
        overwrite = overwrite || a == "--overwrite";
    }
    auto merged = runtime::mergeStoppedRanks(
        *out, pids, overwrite, optionValue(args.command, "--backend").value_or(""), stoppedBy, error);
    if (!merged) {
        std::fprintf(stderr, "[launch] nothing merged into %s: %s\n", out->c_str(), merged.error().describe().c_str());
        return;
    }
    std::fprintf(stderr, "[launch] merged the %d global batches every rank finished (of %d planned) into %s\n",
        merged->value("steps", 0), merged->value("steps_planned", 0), out->c_str());
    if (args.json) {
        std::cout << merged->dump(2) << '\n' << std::flush;
    }
}

} // namespace

int runLaunch(const LaunchArgs& args, const std::string& executable)
{
    if (args.nprocPerNode < 1) {
        std::cerr << "error: --nproc-per-node must be at least 1\n";
        return 2;
    }
    if (args.command.empty()) {
        std::cerr << "error: nothing to launch: give the command after --, e.g. launch --nproc-per-node 2 -- train ...\n";
        return 2;
    }
    const int port = runtime::freeLoopbackPort();
    if (port < 0) {
        std::cerr << "error: no free TCP port on 127.0.0.1\n";
        return 1;
    }
    std::vector<std::string> argvStrings{executable};
    argvStrings.insert(argvStrings.end(), args.command.begin(), args.command.end());
    auto has = [&](const char* flag) {
        for (const std::string& a : args.command) {
            if (a == flag) {
                return true;
            }
        }
        return false;
    };
    if (!has("--distributed")) {
        argvStrings.emplace_back("--distributed");
    }
    if (args.json && !has("--json")) {
        argvStrings.emplace_back("--json");
    }
    std::vector<char*> argv;
    for (std::string& s : argvStrings) {
        argv.push_back(s.data());
    }
    argv.push_back(nullptr);

    // The ranks meet through a c10d FileStore in a directory only this user can enter: on one
    // machine nothing needs to listen for the rendezvous (issue 14: the TCPStore bound *:PORT).
    char storeDir[] = "/tmp/bubblescope-launch-XXXXXX";
    if (::mkdtemp(storeDir) == nullptr) {
        std::perror("mkdtemp");
        return 1;
    }
    const std::string storeFile = std::string(storeDir) + "/rendezvous";
    struct RemoveStoreDir
    {
        std::string dir, file;
        ~RemoveStoreDir()
        {
            ::unlink(file.c_str());
            ::rmdir(dir.c_str());
        }
    } removeStoreDir{storeDir, storeFile};

    const pid_t launcher = ::getpid();
    std::vector<Rank> ranks(static_cast<std::size_t>(args.nprocPerNode));
    for (int k = 0; k < args.nprocPerNode; ++k) {
        int out[2], err[2];
        if (::pipe(out) != 0 || ::pipe(err) != 0) {
            std::perror("pipe");
            return 1;
        }
        const pid_t pid = ::fork();
        if (pid < 0) {
            std::perror("fork");
            return 1;
        }
        if (pid == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlive the launcher
            if (::getppid() != launcher) {
                ::_exit(1);
            }
            ::dup2(out[1], STDOUT_FILENO);
            ::dup2(err[1], STDERR_FILENO);
            ::close(out[0]);
            ::close(out[1]);
            ::close(err[0]);
            ::close(err[1]);
            ::setenv("RANK", std::to_string(k).c_str(), 1);
            ::setenv("LOCAL_RANK", std::to_string(k).c_str(), 1);
            ::setenv("WORLD_SIZE", std::to_string(args.nprocPerNode).c_str(), 1);
            ::setenv("LOCAL_WORLD_SIZE", std::to_string(args.nprocPerNode).c_str(), 1);
            ::setenv("MASTER_ADDR", "127.0.0.1", 1);
            ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
            ::setenv(runtime::kRendezvousFileEnv, storeFile.c_str(), 1);
            ::execv(executable.c_str(), argv.data());
            std::perror("execv");
            ::_exit(127);
        }
        ::close(out[1]);
        ::close(err[1]);
        ranks[static_cast<std::size_t>(k)].pid = pid;
        ranks[static_cast<std::size_t>(k)].out = out[0];
        ranks[static_cast<std::size_t>(k)].err = err[0];
    }

    std::optional<int> firstFailure;
    std::string failure; // "rank K was killed by SIGKILL (signal 9)": the rank that failed first
    std::optional<Clock::time_point> failedAt;
    bool killed = false;
    bool forwarded = false;
    const StopScope stoppable; // Ctrl-C / SIGTERM go to the ranks instead of ending the launcher
    for (;;) {
        if (stopRequested() && !forwarded) {
            // Each rank gets the signal the launcher got; the grace period then bounds the wait.
            forwarded = true;
            std::fprintf(stderr, "[launch] %s: forwarding it to the ranks, waiting up to %.0f s\n",
                stopSignal() == SIGTERM ? "SIGTERM" : "SIGINT", args.graceS);
            for (Rank& r : ranks) {
                if (!r.exitCode) {
                    ::kill(r.pid, stopSignal());
                }
            }
            if (!failedAt) {
                failedAt = Clock::now();
            }
        }
        std::vector<pollfd> fds;
        std::vector<std::pair<std::size_t, bool>> owners; // (rank, is stdout)
        for (std::size_t k = 0; k < ranks.size(); ++k) {
            if (ranks[k].out >= 0) {
                fds.push_back({ranks[k].out, POLLIN, 0});
                owners.emplace_back(k, true);
            }
            if (ranks[k].err >= 0) {
                fds.push_back({ranks[k].err, POLLIN, 0});
                owners.emplace_back(k, false);
            }
        }
        if (!fds.empty()) {
            ::poll(fds.data(), fds.size(), 100);
        } else {
            ::usleep(20000);
        }
        for (std::size_t i = 0; i < fds.size(); ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            Rank& r = ranks[owners[i].first];
            const int rank = static_cast<int>(owners[i].first);
            char chunk[4096];
            const ssize_t n = ::read(fds[i].fd, chunk, sizeof chunk);
            const bool isOut = owners[i].second;
            if (n <= 0) {
                ::close(fds[i].fd);
                (isOut ? r.out : r.err) = -1;
                if (isOut && !(args.json && rank == 0)) {
                    flushLines(r.outBuf, rank, stdout, true);
                } else if (!isOut) {
                    flushLines(r.errBuf, rank, stderr, true);
                }
                continue;
            }
            const std::string text(chunk, static_cast<std::size_t>(n));
            if (isOut && args.json && rank == 0) {
                r.captured += text; // the merged summary, printed as is
            } else if (isOut) {
                r.outBuf += text;
                flushLines(r.outBuf, rank, args.json ? stderr : stdout, false);
            } else {
                r.errBuf += text;
                flushLines(r.errBuf, rank, stderr, false);
            }
        }
        bool running = false;
        for (std::size_t k = 0; k < ranks.size(); ++k) {
            Rank& r = ranks[k];
            if (r.exitCode) {
                continue;
            }
            int status = 0;
            const pid_t done = ::waitpid(r.pid, &status, WNOHANG);
            if (done == 0) {
                running = true;
                continue;
            }
            r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
            if (*r.exitCode != 0 && !firstFailure && !forwarded) {
                firstFailure = *r.exitCode;
                failedAt = Clock::now();
                char how[96];
                if (WIFSIGNALED(status)) {
                    std::snprintf(how, sizeof how, "was killed by %s (signal %d)", signalName(WTERMSIG(status)),
                        WTERMSIG(status));
                } else {
                    std::snprintf(how, sizeof how, "exited with code %d", *r.exitCode);
                }
                failure = "rank " + std::to_string(k) + " " + how;
                std::fprintf(
                    stderr, "[launch] %s first; waiting up to %.0f s for the others\n", failure.c_str(), args.graceS);
            } else if (*r.exitCode != 0 && !firstFailure) {
                firstFailure = *r.exitCode;
            }
        }
        if (!running) {
            bool pipesOpen = false;
            for (const Rank& r : ranks) {
                pipesOpen = pipesOpen || r.out >= 0 || r.err >= 0;
            }
            if (!pipesOpen) {
                break;
            }
        }
        if (failedAt && !killed && Clock::now() - *failedAt > std::chrono::duration<double>(args.graceS)) {
            for (Rank& r : ranks) {
                if (!r.exitCode) {
                    std::fprintf(stderr, "[launch] killing rank pid %d (still running after the grace period)\n",
                                 static_cast<int>(r.pid));
                    ::kill(r.pid, SIGKILL);
                }
            }
            killed = true;
        }
    }
    if (args.json && !ranks.empty()) {
        std::cout << ranks[0].captured << std::flush;
    }
    // Rank 0 merges the run when every rank finished; otherwise what the ranks kept (their metrics
    // and per-batch trace chunks in OUT/rankK) becomes the run directory here.
    std::vector<pid_t> pids;
    for (const Rank& r : ranks) {
        pids.push_back(r.pid);
    }
    const bool rank0Merged = !ranks.empty() && ranks[0].exitCode == 0;
    if (forwarded) {
        if (!rank0Merged) {
            mergeWhatRanksKept(args, pids, stopSignal() == SIGTERM ? "SIGTERM" : "SIGINT", "");
        }
        return stoppedExitCode();
    }
    if (firstFailure) {
        if (!rank0Merged) {
            mergeWhatRanksKept(args, pids, "", "the run failed: " + failure);
        }
        std::fprintf(stderr, "[launch] the run failed: %s\n", failure.c_str());
        // One table of exit codes: a rank that refused its input (2) makes the launch 2; a rank
        // that failed while running, a killed one included (137 for SIGKILL), makes it 1.
        return *firstFailure == kExitUsage ? kExitUsage : kExitFailure;
    }
    return kExitOk;
}

void addLaunchCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<LaunchArgs>();
    CLI::App* sub = app.add_subcommand(
        "launch", "Start N local ranks of a distributed run the torchrun way: launch --nproc-per-node N -- train ...");
    sub->add_option("--nproc-per-node", args->nprocPerNode, "Ranks to start (one per pipeline stage)")
        ->required()
        ->check(integerIn(1, 1024));
    sub->add_flag("--json", args->json, "Print the merged run summary (train --json schema)");
    sub->add_option("--grace", args->graceS, "Seconds the other ranks get after one fails before they are killed")
        ->check(finiteIn(0, kMaxSeconds, "s"));
    sub->add_option("command", args->command, "The command each rank runs, after --")->expected(-1)->required();
    sub->callback([args, &exitCode] {
        char path[4096];
        const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0) {
            std::cerr << "error: cannot find this executable (/proc/self/exe)\n";
            exitCode = 1;
            return;
        }
        exitCode = runLaunch(*args, std::string(path, static_cast<std::size_t>(n)));
    });
}

} // namespace bs::cli
