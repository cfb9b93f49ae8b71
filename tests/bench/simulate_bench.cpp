// The GUI calls simulate() under a slider: p=8, m=16 (v=2 where a schedule takes several stages
// per rank), N=100 must take at most 3 ms a call for every schedule, and the time per event must
// stay flat from N=100 to N=10000 (the "per event" counter; the N=10000 cases end in _n10000).
//   ./build/ci/tests/bench/bench_simulate --benchmark_min_time=1

#include "base/heap_retention.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/simulator.h"

#include <benchmark/benchmark.h>

#include <cstdlib>

namespace {

// As the GUI and the CLI do at start-up; BS_BENCH_DEFAULT_HEAP=1 measures glibc's defaults.
const bool kHeapRetained = std::getenv("BS_BENCH_DEFAULT_HEAP") == nullptr && bs::retainFreedHeap();

void simulateSchedule(benchmark::State& state, const std::string& name, int batches)
{
    bs::runtime::SimulationRequest request{
        {.name = name, .stages = 8, .microbatches = 16, .accum = 0, .batches = batches},
        bs::runtime::CostModel::uniform(8, 1'000'000, 1'000'000, 1'000'000, 0, 100'000), 1};
    std::size_t events = 0;
    for (auto _ : state) {
        auto result = bs::runtime::simulate(request);
        if (!result) {
            state.SkipWithError(result.error().message.c_str());
            return;
        }
        events = result->trace->size();
        benchmark::DoNotOptimize(result->report.bubbleFraction);
    }
    state.counters["events"] = static_cast<double>(events);
    state.counters["heap_retained"] = kHeapRetained ? 1 : 0;
    state.counters["per_event"] = benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Every catalogue schedule at N = 100 and N = 10000.
const int kRegistered = [] {
    for (const auto& info : bs::runtime::scheduleCatalogue()) {
        for (int n : {100, 10000}) {
            std::string label = info.name + "_p8_m16_n" + std::to_string(n);
            benchmark::RegisterBenchmark(label.c_str(), [name = info.name, n](benchmark::State& s) {
                simulateSchedule(s, name, n);
            })->Unit(benchmark::kMillisecond);
        }
    }
    return 0;
}();

} // namespace
