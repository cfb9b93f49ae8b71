// The GUI calls simulate() under a slider: p=8, m=16, N=100 must take well under 5 ms.
//   ./build/tests/bench/bench_simulate --benchmark_min_time=1

#include "runtime/sim/simulator.h"

#include <benchmark/benchmark.h>

namespace {

void simulateSchedule(benchmark::State& state, const std::string& name)
{
    bs::runtime::SimulationRequest request{
        {.name = name, .stages = 8, .microbatches = 16, .accum = 0, .batches = 100},
        bs::runtime::CostModel::uniform(8, 1'000'000, 1'000'000, 1'000'000, 0, 100'000), 1};
    std::size_t events = 0;
    for (auto _ : state) {
        auto result = bs::runtime::simulate(request);
        events = result->trace->size();
        benchmark::DoNotOptimize(result->report.bubbleFraction);
    }
    state.counters["events"] = static_cast<double>(events);
}

BENCHMARK_CAPTURE(simulateSchedule, paci_p8_m16_n100, std::string("paci"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulateSchedule, 1f1b_p8_m16_n100, std::string("1f1b"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulateSchedule, zb_h2_p8_m16_n100, std::string("zb-h2"))->Unit(benchmark::kMillisecond);

} // namespace
