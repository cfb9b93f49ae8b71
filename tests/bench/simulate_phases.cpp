// Where one simulate() call's time goes, phase by phase (a plain program, not a benchmark):
// generating the schedule, validating it, the scheduler core's drive and the analysis, each the
// fastest of `repeats` calls, beside the whole call (which validates beside the drive).
//   ./build/ci/tests/bench/simulate_phases [schedule] [batches] [repeats]
// The drive and analysis phases use one uniform cost per stage (chunk): F = I = W = 0.5 ms, a
// transfer 0.1 ms, as bench_simulate's 1 ms per rank split over v = 2 chunks.

#include "profiler/analysis/analyze.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/validate.h"
#include "runtime/plan/sim/cost_model_executor.h"
#include "runtime/plan/sim/scheduler_core.h"
#include "runtime/plan/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

double millis(Clock::time_point from, Clock::time_point to)
{
    return std::chrono::duration<double, std::milli>(to - from).count();
}

} // namespace

int main(int argc, char** argv)
{
    using namespace bs::runtime;
    const std::string name = argc > 1 ? argv[1] : "interleaved-zb";
    const int batches = argc > 2 ? std::max(1, std::atoi(argv[2])) : 100;
    const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 200;
    const ScheduleParams params{.name = name, .stages = 8, .microbatches = 16, .accum = 0, .batches = batches};
    const auto rankCosts = CostModel::uniform(8, 1'000'000, 1'000'000, 1'000'000, 0, 100'000);
    double generate = 1e30, validation = 1e30, driving = 1e30, analysis = 1e30, whole = 1e30;
    std::size_t events = 0, actions = 0;
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = Clock::now();
        auto schedule = generateUnvalidated(params);
        const auto t1 = Clock::now();
        if (!schedule) {
            std::fprintf(stderr, "%s\n", schedule.error().describe().c_str());
            return 2;
        }
        const auto verdict = validate(*schedule);
        const auto t2 = Clock::now();
        const auto costs = CostModel::uniform(schedule->stages(), 500'000, 500'000, 500'000, 0, 100'000);
        bs::profiler::TraceStore store(traceMetaFor(*schedule));
        CostModelExecutor executor(costs);
        DriveOptions options;
        options.appendBatch = 1024; // as simulate() drives
        const auto t3 = Clock::now();
        const auto stats = drive(*schedule, executor, store, options);
        const auto t4 = Clock::now();
        const auto trace = store.snapshot();
        const auto report = bs::profiler::analyze(*trace, analysisOptionsFor(*schedule, &costs));
        const auto t5 = Clock::now();
        const auto result = simulate({params, rankCosts, 1});
        const auto t6 = Clock::now();
        if (!verdict || !stats || !result) {
            std::fprintf(stderr, "%s: simulation failed\n", name.c_str());
            return 1;
        }
        events = trace->size();
        actions = stats->actions;
        generate = std::min(generate, millis(t0, t1));
        validation = std::min(validation, millis(t1, t2));
        driving = std::min(driving, millis(t3, t4));
        analysis = std::min(analysis, millis(t4, t5));
        whole = std::min(whole, millis(t5, t6));
    }
    std::printf("%s p=8 m=16 N=%d, %zu events, fastest of %d (ms): generate %.2f  validate %.2f  drive %.2f  "
                "analyze %.2f  | simulate() %.2f  (%zu actions)\n",
        name.c_str(), batches, events, repeats, generate, validation, driving, analysis, whole, actions);
    return 0;
}
