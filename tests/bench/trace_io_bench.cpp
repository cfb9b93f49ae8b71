// Writing and reading 10^6 trace events as Chrome JSON.
#include "profiler/io/chrome_trace.h"

#include <benchmark/benchmark.h>

#include <fstream>

namespace {

using namespace bs::profiler;

std::shared_ptr<const TraceSnapshot> makeTrace(std::size_t count)
{
    TraceStore store(TraceMeta{.stages = 8, .clock = "virtual", .title = "bench", .attributes = {}});
    bs::profiler::TimeNs t = 0;
    for (std::size_t i = 0; i < count; ++i) {
        TraceEvent e;
        e.stage = static_cast<std::uint16_t>(i % 8);
        e.kind = static_cast<EventKind>(i % 5);
        e.lane = i % 7 == 0 ? Lane::Comm : Lane::Compute;
        e.start = t;
        e.end = t + 1'234'567;
        e.microbatch = static_cast<std::int32_t>(i / 8);
        e.version = static_cast<std::int32_t>(i / 64);
        e.bytes = 4 << 20;
        store.append(e);
        t += 987'654;
    }
    return store.snapshot();
}

void writeTrace(benchmark::State& state)
{
    const auto trace = makeTrace(static_cast<std::size_t>(state.range(0)));
    // To /dev/null: measures formatting and the stream, not a growing in-memory string (whose
    // page faults cost more than the formatting) nor the disk.
    const std::size_t bytes = toChromeTraceJson(*trace).size();
    for (auto _ : state) {
        std::ofstream out("/dev/null", std::ios::binary);
        if (!writeChromeTrace(out, *trace)) {
            state.SkipWithError("write failed");
        }
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}
BENCHMARK(writeTrace)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);

void readTrace(benchmark::State& state)
{
    const std::string json = toChromeTraceJson(*makeTrace(static_cast<std::size_t>(state.range(0))));
    for (auto _ : state) {
        auto trace = readChromeTrace(json);
        if (!trace || trace->events.size() != static_cast<std::size_t>(state.range(0))) {
            state.SkipWithError("read failed");
        }
        benchmark::DoNotOptimize(trace);
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(json.size()));
}
BENCHMARK(readTrace)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(2);

} // namespace

BENCHMARK_MAIN();
