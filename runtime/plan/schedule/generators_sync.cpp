// Synchronous schedules: every global batch ends in a flush and one update per stage.

#include "runtime/plan/schedule/batch_repeat.h"
#include "runtime/plan/schedule/generators.h"

#include <algorithm>

namespace bs::runtime::detail {

namespace {

Schedule syncSkeleton(const ScheduleParams& params, std::vector<int> inflightBound)
{
    Schedule schedule;
    schedule.params = params;
    schedule.weights = WeightPolicy::Flush;
    schedule.inflightBound = std::move(inflightBound);
    schedule.weightVersionBound.assign(static_cast<std::size_t>(params.stages), 1);
    schedule.programs.resize(static_cast<std::size_t>(params.stages));
    return schedule;
}

} // namespace

Schedule makeGpipe(const ScheduleParams& params)
{
    const int p = params.stages;
    const int m = params.microbatches;
    Schedule schedule = syncSkeleton(params, std::vector<int>(static_cast<std::size_t>(p), m));
    for (int s = 0; s < p; ++s) {
        std::vector<Action> batch; // batch 0; appendBatches() moves it on
        for (int i = 0; i < m; ++i) { // all forwards...
            batch.push_back(forward(s, i));
        }
        for (int i = 0; i < m; ++i) { // ...then all backwards, in the same order (PyTorch's GPipe)
            batch.push_back(backward(s, i));
        }
        batch.push_back(update(s, 0, 0, m - 1));
        appendBatches(schedule.programs[static_cast<std::size_t>(s)], batch, m, params.batches);
    }
    return schedule;
}

Schedule makeOneFOneB(const ScheduleParams& params)
{
    const int p = params.stages;
    const int m = params.microbatches;
    std::vector<int> bound(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
        bound[static_cast<std::size_t>(s)] = std::min(p - s, m);
    }
    Schedule schedule = syncSkeleton(params, bound);
    for (int s = 0; s < p; ++s) {
        const int warmup = std::min(p - s - 1, m);
        std::vector<Action> batch; // batch 0; appendBatches() moves it on
        for (int i = 0; i < warmup; ++i) { // warm-up: fill this stage's share of the pipe
            batch.push_back(forward(s, i));
        }
        for (int i = 0; i + warmup < m; ++i) { // steady: one forward, one backward
            batch.push_back(forward(s, warmup + i));
            batch.push_back(backward(s, i));
        }
        for (int i = std::max(m - warmup, 0); i < m; ++i) { // cool-down: drain the backwards
            batch.push_back(backward(s, i));
        }
        batch.push_back(update(s, 0, 0, m - 1));
        appendBatches(schedule.programs[static_cast<std::size_t>(s)], batch, m, params.batches);
    }
    return schedule;
}

} // namespace bs::runtime::detail
