// CPU cost of what runs in CUPTI's buffer-completed callback: parsing a buffer of kernel and
// external-correlation records and turning them into tagged trace events. This work is on the
// collector's side of the CUPTI overhead budget, so it must stay far below the GPU's record rate.
#include "profiler/cupti/activity_adapter.h"
#include "profiler/cupti/activity_correlator.h"
#include "profiler/cupti/activity_parser.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

using namespace bs::profiler;
using namespace bs::profiler::cupti;

namespace {

// One 8 MB-class buffer: n (tag, kernel) pairs as CUPTI lays them out.
std::vector<std::uint8_t> makeBuffer(std::uint32_t n)
{
    std::vector<std::uint8_t> bytes;
    auto add = [&](const auto& r) {
        const std::size_t at = bytes.size();
        bytes.resize(at + (sizeof r + 7) / 8 * 8);
        std::memcpy(bytes.data() + at, &r, sizeof r);
    };
    for (std::uint32_t i = 0; i < n; ++i) {
        CUpti_ActivityExternalCorrelation x{};
        x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
        x.externalId = *packTag({static_cast<int>(i % 8), EventKind::Forward, static_cast<int>(i / 8), 0});
        x.correlationId = i;
        add(x);
        detail::KernelRecord k{};
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = 1'000 * std::uint64_t{i};
        k.end = k.start + 900;
        k.correlationId = i;
        k.streamId = i % 8;
        add(k);
    }
    return bytes;
}

void BM_ParseAndCorrelate(benchmark::State& state)
{
    const auto n = static_cast<std::uint32_t>(state.range(0));
    const auto buffer = makeBuffer(n);
    const std::vector<ClockSample> samples = {{0, 0, 0}};
    std::vector<TraceEvent> events;
    events.reserve(n);
    for (auto _ : state) {
        ActivityCorrelator correlator(ClockSync::fromSamples(samples), 0, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
        events.clear();
        correlator.consume(parseActivityBuffer(buffer).records, events);
        benchmark::DoNotOptimize(events.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n); // kernels
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * buffer.size()));
}
BENCHMARK(BM_ParseAndCorrelate)->Arg(1 << 10)->Arg(1 << 15); // 2^15 pairs ≈ 7.9 MB: one full buffer

} // namespace

BENCHMARK_MAIN();
