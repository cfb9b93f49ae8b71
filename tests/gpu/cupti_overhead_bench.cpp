// CUPTI overhead: wall time of a fixed GPU workload without and with the collector (kernel,
// memcpy, memset, sync and external-correlation records on; one tag push/pop per action of
// `--per-action` kernels). Uncaptured runs go first: CUPTI stays loaded once enabled, so
// interleaving would charge its residue to the baseline. Prints one JSON object on stdout.
// Exit code 2 without a GPU (with the reason on stderr), 0 otherwise; the 3 % target is checked by
// tests/gpu/run.sh, not here.
#include "profiler/cupti/cupti_collector.h"
#include "tests/gpu/busy_kernel.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace bs::profiler;
using namespace bs::profiler::cupti;

namespace {

struct Args
{
    int kernels = 4000;
    long long cycles = 40'000; // ~20 us per kernel at ~2 GHz
    int perAction = 10;
    int reps = 7;
    int stages = 8;
};

Args parse(int argc, char** argv)
{
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        const long long v = std::atoll(argv[i + 1]);
        if (k == "--kernels") a.kernels = static_cast<int>(v);
        else if (k == "--cycles") a.cycles = v;
        else if (k == "--per-action") a.perAction = static_cast<int>(v);
        else if (k == "--reps") a.reps = static_cast<int>(v);
    }
    return a;
}

double runOnce(const Args& a, CuptiCollector* collector, const std::vector<cudaStream_t>& streams)
{
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < a.kernels; ++i) {
        const int stage = (i / a.perAction) % a.stages;
        const bool first = i % a.perAction == 0;
        if (collector && first) {
            (void)collector->pushActionTag(stage, EventKind::Forward, i / a.perAction, 0);
        }
        bs::gpu_test::launchBusyKernel(streams[static_cast<std::size_t>(stage)], a.cycles);
        if (collector && (i % a.perAction == a.perAction - 1 || i + 1 == a.kernels)) {
            (void)collector->popActionTag();
        }
    }
    cudaDeviceSynchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    const Args a = parse(argc, argv);
    int n = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&n); e != cudaSuccess || n == 0) {
        std::fprintf(stderr, "SKIP: no CUDA GPU (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 2;
    }
    std::vector<cudaStream_t> streams(static_cast<std::size_t>(a.stages));
    for (auto& s : streams) {
        cudaStreamCreate(&s);
    }
    (void)runOnce(a, nullptr, streams); // warm-up: module load, first-launch costs
    std::vector<double> plain, captured;
    for (int r = 0; r < a.reps; ++r) {
        plain.push_back(runOnce(a, nullptr, streams));
    }
    TraceStore store;
    auto collector = CuptiCollector::start(store);
    if (!collector) {
        std::fprintf(stderr, "collector unavailable: %s\n", collector.error().describe().c_str());
        return 3;
    }
    (void)runOnce(a, collector->get(), streams);
    for (int r = 0; r < a.reps; ++r) {
        captured.push_back(runOnce(a, collector->get(), streams));
    }
    (void)(*collector)->stop();
    const auto stats = (*collector)->stats();
    const double p = median(plain), c = median(captured);
    std::printf("{\"kernels\": %d, \"cycles\": %lld, \"per_action\": %d, \"reps\": %d, \"uncaptured_ms\": %.3f, "
                "\"captured_ms\": %.3f, \"overhead_pct\": %.2f, \"kernel_records\": %llu, \"dropped_records\": %llu, "
                "\"events\": %zu}\n",
                a.kernels, a.cycles, a.perAction, a.reps, p, c, 100.0 * (c - p) / p,
                static_cast<unsigned long long>(stats.records.kernels),
                static_cast<unsigned long long>(stats.records.droppedRecords), store.size());
    return 0;
}
