// What a user waits for when simulating (docs/BENCHMARKS.md, "Simulate"): one simulate() call for
// every catalogue schedule at p = 8, m = 16 (v = 2 where a schedule takes several stages per
// rank), N = 100 and N = 10 000, as the CLI's tables ask for it (figures only: a long run's
// figures come from its steady state, so N = 10 000 should cost at most 2x N = 100), and with the
// events of all N batches (the GUI's timeline, `simulate --trace`), "_events".
//   ./build/ci/tests/bench/bench_simulate --benchmark_min_time=0.2

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/simulator.h"

#include <benchmark/benchmark.h>

namespace {

void simulateSchedule(benchmark::State& state, const std::string& name, int batches, bool figuresOnly)
{
    bs::runtime::SimulationRequest request{
        {.name = name, .stages = 8, .microbatches = 16, .accum = 0, .batches = batches},
        bs::runtime::CostModel::uniform(8, 1'000'000, 1'000'000, 1'000'000, 0, 100'000), 1};
    request.figuresOnly = figuresOnly;
    for (auto _ : state) {
        auto result = bs::runtime::simulate(request);
        if (!result) {
            state.SkipWithError(result.error().message.c_str());
            return;
        }
        benchmark::DoNotOptimize(result->report.bubbleFraction);
    }
}

const int kRegistered = [] {
    for (const auto& info : bs::runtime::scheduleCatalogue()) {
        for (const bool figuresOnly : {true, false}) {
            for (int n : {100, 10000}) {
                std::string label = info.name + "_p8_m16_n" + std::to_string(n) + (figuresOnly ? "" : "_events");
                benchmark::RegisterBenchmark(label.c_str(), [name = info.name, n, figuresOnly](benchmark::State& s) {
                    simulateSchedule(s, name, n, figuresOnly);
                })->Unit(benchmark::kMillisecond);
            }
        }
    }
    return 0;
}();

} // namespace
