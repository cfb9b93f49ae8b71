// Wall-time speed-up of the threaded executor over the serial driver on identical work: the same
// config (2 stages by default, one intra-op thread per stage), serial and threaded runs
// interleaved, several repetitions; prints each time, the medians and their ratio.
//
//   threaded_speedup_bench [reps=5] [steps=6] [schedule=1f1b] [stages=2] [preset=tiny]
#include "runtime/plan/config/config_presets.h"
#include "runtime/train/exec/run_session.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double cpuSeconds()
{
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec)
        + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    using namespace bs::runtime;
    const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 6;
    const std::string schedule = argc > 3 ? argv[3] : "1f1b";
    const int stages = argc > 4 ? std::atoi(argv[4]) : 2;
    const std::string preset = argc > 5 ? argv[5] : "tiny";

    RunConfig c = demoConfig();
    auto shape = bs::gptPreset(preset);
    if (!shape) {
        std::fprintf(stderr, "%s\n", shape.error().describe().c_str());
        return 2;
    }
    c.model.preset = preset;
    c.model.shape = *shape;
    c.schedule.name = schedule;
    c.pipeline.stages = stages;
    c.pipeline.microbatches = 8;
    c.pipeline.accum = 0;
    c.pipeline.microBatchSize = 4;
    c.training.steps = steps;
    c.training.evalInterval = 0;
    c.device.intraOpThreads = 1; // one intra-op thread per stage in both modes: identical work
    c.profiling.trace = false;

    std::vector<double> serial, threaded, serialCores, threadedCores;
    double serialLoss = 0.0, threadedLoss = 0.0;
    for (int r = 0; r < reps; ++r) {
        for (ExecutorKind kind : {ExecutorKind::Serial, ExecutorKind::Threaded}) {
            SessionOptions options;
            options.executor = kind;
            auto session = RunSession::create(c, options);
            if (!session) {
                std::fprintf(stderr, "%s\n", session.error().describe().c_str());
                return 1;
            }
            const auto t0 = std::chrono::steady_clock::now();
            const double cpu0 = cpuSeconds();
            if (auto s = session->run(); !s) {
                std::fprintf(stderr, "%s\n", s.error().describe().c_str());
                return 1;
            }
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const double loss = session->summary().finalTrainLoss.value_or(0.0);
            (kind == ExecutorKind::Serial ? serial : threaded).push_back(wall);
            (kind == ExecutorKind::Serial ? serialLoss : threadedLoss) = loss;
            const double cores = (cpuSeconds() - cpu0) / wall; // CPU the run actually got (other load shows here)
            (kind == ExecutorKind::Serial ? serialCores : threadedCores).push_back(cores);
            std::printf("rep %d %-8s %.3f s  cpu/wall %.2f  final loss %.6f\n", r,
                kind == ExecutorKind::Serial ? "serial" : "threaded", wall, cores, loss);
        }
    }
    const double ms = median(serial), mt = median(threaded);
    std::printf("%s %s p=%d m=8 b=4 steps=%d reps=%d: serial median %.3f s (cpu/wall %.2f), threaded median %.3f s "
                "(cpu/wall %.2f), speed-up %.2fx; losses %s\n",
        preset.c_str(), schedule.c_str(), stages, steps, reps, ms, median(serialCores), mt, median(threadedCores),
        ms / mt, serialLoss == threadedLoss ? "identical" : "DIFFER");
    return serialLoss == threadedLoss ? 0 : 1;
}
