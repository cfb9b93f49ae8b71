#pragma once
// The simulator benchmark's size (tests/bench/simulate_bench.cpp): p = 8 ranks, m = 16
// micro-batches a batch (a = 4 where the schedule takes a window), with its uniform costs a stage,
// for the sim tests that check something happens at that size (a replay, a leap).

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/cost_model.h"

namespace bs::runtime::test {

inline Result<Schedule> benchmarkSchedule(const ScheduleInfo& info, int batches)
{
    return makeSchedule({.name = info.name,
        .stages = 8,
        .microbatches = 16,
        .accum = info.takesAccumWindow() ? 4 : 0,
        .batches = batches});
}

/// F = I = W = 0.5 ms a stage, a transfer 0.1 ms (bench_simulate's 1 ms a rank over v = 2 chunks).
inline CostModel benchmarkCosts(const Schedule& schedule)
{
    return CostModel::uniform(schedule.stages(), 500'000, 500'000, 500'000, 0, 100'000);
}

} // namespace bs::runtime::test
