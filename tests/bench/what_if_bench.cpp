// The slider's what-if end to end, as the GUI asks it (docs/BENCHMARKS.md, "What-if"): ui::predict()
// with the GUI's default settings (tiny GPT, p = 8, m = a = 8, b = 8, 4 batches, CPU profile) for
// every catalogue schedule beside the 1F1B baseline: two simulate() calls and two timeline
// indexes. Target: one frame (16 ms). Prints the fastest of REPEATS calls per schedule.
//   ./build/ci/tests/bench/what_if_bench [REPEATS]
#include "runtime/plan/schedule/catalogue.h"
#include "ui/tuning/what_if.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv)
{
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;
    double worst = 0;
    for (const auto& info : bs::runtime::scheduleCatalogue()) {
        bs::ui::WhatIfConfig config;
        config.run.schedule.name = info.name;
        double fastest = 1e30;
        for (int i = 0; i < repeats; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            auto prediction = bs::ui::predict(config);
            const auto t1 = std::chrono::steady_clock::now();
            if (!prediction) {
                std::printf("%-18s error: %s\n", info.name.c_str(), prediction.error().describe().c_str());
                break;
            }
            fastest = std::min(fastest, std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
        worst = std::max(worst, fastest < 1e29 ? fastest : 0);
        std::printf("%-18s %.2f ms\n", info.name.c_str(), fastest);
    }
    std::printf("slowest %.2f ms (target 16)\n", worst);
    return worst <= 16 ? 0 : 1;
}
