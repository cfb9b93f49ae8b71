// Point-to-point cost of one hand-off over the product's Gloo transport (c10d TCPStore + Gloo on
// localhost): two ranks, forked from this process, ping-pong an activation forward and a gradient
// back, as neighbour stages do. One hand-off = half a round trip, and includes everything the
// executor pays: the copy into a tensor, the Gloo send/recv, the copy out. Also prints the
// in-process hand-off of the threaded/serial executors (a copy of the same vector) for scale.
//
//   gloo_p2p_bench [iterations=200] [floats...]   (default sizes: tiny, small, gpt2-medium
//                                                   activations at micro-batch 4, 4, 1)
#include "runtime/train/dist/dist_env.h"
#include "runtime/train/dist/gloo_transport.h"
#include "runtime/train/dist/listen_socket.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Rank 0 sends activations and receives gradients; rank 1 the reverse. Returns the median
// one-way time in microseconds (rank 0 only; rank 1 returns 0).
int runRank(int rank, int port, int iterations, const std::vector<std::int64_t>& sizes)
{
    using namespace bs::runtime;
    DistEnv env{.rank = rank, .worldSize = 2, .localRank = rank, .masterAddr = "127.0.0.1", .masterPort = port};
    auto transport = GlooTransport::connect(env);
    if (!transport) {
        std::fprintf(stderr, "rank %d: %s\n", rank, transport.error().describe().c_str());
        return 1;
    }
    GlooTransport& t = **transport;
    std::int64_t mb = 0;
    for (std::int64_t n : sizes) {
        const std::vector<std::int64_t> shape{n};
        HandOff value;
        value.shape = shape;
        value.values.assign(static_cast<std::size_t>(n), 1.0f);
        std::vector<double> oneWayUs;
        for (int i = -10; i < iterations; ++i, ++mb) { // 10 warm-up round trips
            const auto t0 = Clock::now();
            if (rank == 0) {
                if (!t.send(HandOffKind::Activation, 1, mb, value) || !t.recv(HandOffKind::Gradient, 1, mb, shape)) {
                    return 1;
                }
            } else {
                if (!t.recv(HandOffKind::Activation, 0, mb, shape) || !t.send(HandOffKind::Gradient, 0, mb, value)) {
                    return 1;
                }
            }
            if (i >= 0) {
                oneWayUs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 2.0);
            }
        }
        if (!t.flush() || !t.barrier()) {
            return 1;
        }
        if (rank == 0) {
            std::vector<double> copyUs;
            for (int i = 0; i < iterations; ++i) {
                const auto t0 = Clock::now();
                HandOff copy = value;
                copyUs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
                if (copy.values.empty()) {
                    return 1;
                }
            }
            const double mib = static_cast<double>(n) * 4.0 / (1024.0 * 1024.0);
            const double us = median(oneWayUs);
            std::printf("%10lld floats (%6.3f MiB): gloo one-way %8.1f us (%6.0f MiB/s)   in-process copy %7.1f us\n",
                static_cast<long long>(n), mib, us, mib / (us * 1e-6), median(copyUs));
        }
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    const int iterations = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
    std::vector<std::int64_t> sizes;
    for (int i = 2; i < argc; ++i) {
        sizes.push_back(std::atoll(argv[i]));
    }
    if (sizes.empty()) {
        sizes = {4LL * 64 * 128, 4LL * 128 * 256, 1LL * 1024 * 1024}; // b x T x d of tiny, small, gpt2-medium
    }
    const int port = bs::runtime::freeLoopbackPort();
    std::fflush(stdout);
    const pid_t child = ::fork(); // before any torch thread starts
    if (child < 0) {
        std::perror("fork");
        return 1;
    }
    if (child == 0) {
        std::_Exit(runRank(1, port, iterations, sizes));
    }
    const int rc = runRank(0, port, iterations, sizes);
    int status = 0;
    ::waitpid(child, &status, 0);
    return rc != 0 ? rc : (WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}
