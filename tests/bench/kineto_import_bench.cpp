// Imports a job's rank traces and prints how long it took (wall), the events read and the peak
// resident memory, for the side-by-side with Python's json module in docs/BENCHMARKS.md.
// Usage: kineto_import_bench TRACE... (files or folders)

#include "profiler/import/job_import.h"
#include "profiler/import/measured_bubbles.h"

#include <chrono>
#include <cstdio>
#include <sys/resource.h>

int main(int argc, char** argv)
{
    std::vector<std::string> paths(argv + 1, argv + argc);
    const auto t0 = std::chrono::steady_clock::now();
    auto job = bs::profiler::kineto::importKinetoJob(paths);
    const auto t1 = std::chrono::steady_clock::now();
    if (!job) {
        std::fprintf(stderr, "error: %s\n", job.error().describe().c_str());
        return 1;
    }
    const auto bubbles = bs::profiler::kineto::measureBubbles(*job);
    const auto t2 = std::chrono::steady_clock::now();
    std::size_t events = 0;
    for (const auto& r : job->ranks) {
        events += r.events;
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("import: %zu ranks, %zu complete events, %zu actions in trace, %.3f s; bubbles %.3f s; bubble %.2f %%; peak RSS %ld MiB\n",
                job->ranks.size(), events, job->trace->size(), std::chrono::duration<double>(t1 - t0).count(),
                std::chrono::duration<double>(t2 - t1).count(), bubbles.bubbleFraction * 100.0, usage.ru_maxrss / 1024);
    return 0;
}
